/**
 * The layers of src/ and which way their imports may point (npm run check).
 * From the top: the process and the app (server.ts, app.ts, core.ts, cli/),
 * http/ (every HTTP edge), the features, carriers/ (adapters), and at the
 * bottom db/ (connection, transactions, migrations, jobs run by reference)
 * and common/ (plain helpers). docs/architecture.md shows the picture.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle ties its files into one piece that cannot be read, tested or moved alone.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'db-and-common-know-no-feature',
      severity: 'error',
      comment: 'db/ and common/ are the ground floor: they import only each other (and packages).',
      from: { path: '^src/(db|common)/' },
      to: { path: '^src/', pathNot: '^src/(db|common)/' },
    },
    {
      name: 'carriers-know-no-feature-storage-or-http',
      severity: 'error',
      comment: 'A carrier adapter takes messages and reports receipts; it knows no HTTP, no feature, no storage: only carriers/, common/ and the config.',
      from: { path: '^src/carriers/' },
      to: { path: '^src/', pathNot: '^src/(carriers/|common/|config\\.ts$)' },
    },
    {
      name: 'nothing-below-http-imports-http',
      severity: 'error',
      comment: 'http/ is an edge: features, carriers and the database never import it.',
      from: { path: '^src/', pathNot: '^src/(http/|app\\.ts|server\\.ts)' },
      to: { path: '^src/http/' },
    },
    {
      name: 'nothing-below-http-imports-fastify',
      severity: 'error',
      comment: 'Fastify belongs to the HTTP edge only.',
      from: { path: '^src/', pathNot: '^src/(http/|app\\.ts|server\\.ts)' },
      to: { path: '^node_modules/(fastify|@fastify)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    // TypeScript 7 has no compiler API for the cruiser to parse with: swc reads the sources.
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
  },
};
