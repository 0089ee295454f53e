// `npm run lint` holds src/ to its layers (docs/architecture.md): no import cycle, plumbing
// (http, store, config) never imports a feature, the ground floor (lib) imports nothing of Vouch,
// and src/ never imports tests, benchmarks or the console. Type-only imports are exempt: they
// vanish at run time and do not order module loading.

// The folders of src/ in floors, the ground first (docs/architecture.md). A folder imports only
// folders on floors below its own, type-only imports included: two folders never import each
// other, the model's vocabulary (model/) stays below every feature, and HTTP (http/) sits above
// the model: the domain throws lib/domain-errors.ts, which http/ maps to problems.
const FLOORS = [
  ['lib', 'config'],
  ['store'],
  ['model'],
  ['http'],
  ['audit-log'],
  ['auth', 'audit', 'entities'],
  ['webhooks', 'people', 'changes'],
  ['keys', 'network', 'policies'],
  ['rings'],
  ['trust'],
  ['disputes', 'rules'],
  ['reviews'],
  ['console', 'cli'],
];
const floorRules = FLOORS.slice(0, -1).map((floor, i) => ({
  name: `floor-${i + 1}-imports-down`,
  severity: 'error',
  comment: `${floor.join(', ')} import only the floors below them`,
  from: { path: `^src/(${floor.join('|')})/` },
  to: {
    path: `^src/(${FLOORS.slice(i + 1)
      .flat()
      .join('|')})/`,
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...floorRules,
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
      to: {
        path: '^src/(auth|keys|trust|disputes|audit|audit-log|entities|people|changes|policies|webhooks|network|console|rules|reviews)/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'entities-imports-only-the-ground',
      severity: 'error',
      comment:
        "The entity tables' owner serves every feature above it: it reads and writes rows, and imports only lib, config, store and model.",
      from: { path: '^src/entities/' },
      to: { path: '^src/', pathNot: '^src/(entities|lib|config|store|model)/' },
    },
    {
      name: 'lib-imports-nothing-of-vouch',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: '^src/lib/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'rules-and-reviews-are-on-top',
      severity: 'error',
      comment:
        'Rules and reviews build on scoring, policies and audit; those reach them only through seams the composition root fills (trust/outcomes.ts Decider).',
      from: {
        path: '^src/(auth|keys|trust|disputes|audit|entities|policies|webhooks|network|rings|http|store|config|lib)/',
      },
      to: { path: '^src/(rules|reviews)/' },
    },
    {
      name: 'rules-never-imports-reviews',
      severity: 'error',
      comment: 'Reviews add to lists (rules) and read rules; rules know nothing of reviews.',
      from: { path: '^src/rules/' },
      to: { path: '^src/reviews/' },
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
