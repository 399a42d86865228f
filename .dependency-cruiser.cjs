// The architecture, as rules `npm run lint` enforces (and `npm run deps:graph` draws).
// Data flows one way: pages and routes -> lib commands and read models -> database.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle ties modules into one knot that can only be understood (and changed) together.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lib-is-below-the-ui',
      severity: 'error',
      comment: 'lib/ holds the domain: it never imports pages, routes, server actions or React components.',
      from: { path: '^lib/' },
      to: { path: '^(app|components)/' },
    },
    {
      name: 'lib-does-not-import-scripts-or-tests',
      severity: 'error',
      comment: 'Scripts and tests use lib/, never the reverse.',
      from: { path: '^lib/' },
      to: { path: '^(scripts|tests)/' },
    },
    {
      name: 'components-do-not-import-app',
      severity: 'error',
      comment: 'Components are UI parts; pages hand them the server actions they call (as props).',
      from: { path: '^components/' },
      to: { path: '^app/' },
    },
    {
      name: 'app-and-components-do-not-import-scripts-or-tests',
      severity: 'error',
      from: { path: '^(app|components)/' },
      to: { path: '^(scripts|tests)/' },
    },
    {
      name: 'ui-does-not-touch-the-database',
      severity: 'error',
      comment:
        'Pages, routes and components never open a database client: they read through lib/read-models (with the ' +
        'client lib/auth hands a checked session) and change state through lib commands.',
      from: { path: '^(app|components)/' },
      to: { path: '^lib/db/' },
    },
    {
      name: 'sdk-is-standalone',
      severity: 'error',
      comment:
        'lib/sdk is packed as its own package (npm run sdk:pack) with no dependencies: it imports only its own ' +
        'files and Node built-ins, never the server (database, Next.js, Prisma, pg, zod). What the SDK and the ' +
        'server share has its one home in lib/sdk and the server imports it from there, never the reverse: the ' +
        'provider interface (lib/sdk/provider.ts), the sandbox client, and the key derivation and target ' +
        'normalization (lib/sdk/keys.ts, normalize.ts), which the conformance check (K4) must run exactly as the ' +
        'server does; they are pure (node:crypto, node:url), and shipping them beats a list of server files the ' +
        'package would have to copy. Wire types are written by hand; tests/unit/sdk-wire-types.test.ts ties ' +
        'them to the zod schemas at compile time.',
      from: { path: '^lib/sdk/', pathNot: '^lib/sdk/(adapters|mcp)/' },
      to: { pathNot: ['^lib/sdk/', '^node:'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'sdk-boundaries-import-only-their-framework',
      severity: 'error',
      comment:
        'The framework boundaries (lib/sdk/adapters, lib/sdk/mcp) are the only SDK files that import packages: ' +
        'each its own framework (ai, @openai/agents, @langchain/*, @modelcontextprotocol/sdk and the zod its ' +
        'schemas need), an optional peer dependency of the package. They reach the ledger only through the ' +
        'SDK itself (one ledger path), never the server.',
      from: { path: '^lib/sdk/(adapters|mcp)/' },
      to: {
        pathNot: [
          '^lib/sdk/',
          '^node:',
          'node_modules/(ai|@ai-sdk/[^/]+|@openai/agents[^/]*|@langchain/[^/]+|@modelcontextprotocol/sdk|zod)/',
        ],
        dependencyTypesNot: ['core'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.next|\\.data|lib/db/generated)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
