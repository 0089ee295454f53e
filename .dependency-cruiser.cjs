// `npm run lint` holds src/ to its layers (docs/architecture.md): no import cycle, plumbing
// (http, store, config) never imports a feature, the ground floor (lib) imports nothing of Vouch,
// and src/ never imports tests, benchmarks or the console. Type-only imports are exempt: they
// vanish at run time and do not order module loading.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Modules that import each other: move the shared part down a layer.',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'plumbing-imports-no-feature',
      severity: 'error',
      comment: 'http, store and config serve every feature: a feature they need belongs in lib/ or is passed in.',
      from: { path: '^src/(http|store|config)/' },
      to: { path: '^src/(auth|keys|trust|disputes|audit|policies|webhooks|network|console)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'lib-imports-nothing-of-vouch',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: '^src/lib/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'src-not-to-outside',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|console|scripts|examples)/' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/types/' },
  },
};
