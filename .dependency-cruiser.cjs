// `npm run lint` fails on an import cycle in src/ (type-only imports excluded: they vanish at
// run time and do not order module loading) and on src/ importing tests, benchmarks or the console.
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
