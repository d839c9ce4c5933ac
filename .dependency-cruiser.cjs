/**
 * The layers of src/, checked by `npm run check:structure` (docs/architecture.md explains them).
 *
 *   src/cli/main.ts, src/cli/cli.ts      entry point and command dispatch
 *   src/cli/commands/                    one module per command: flags in, one call of the package
 *                                        root, events to renderers, the result to an exit code
 *   the rest of src/cli/                 what commands share: flags and their values, parsing, help,
 *                                        io, the live view
 *   src/index.ts, src/public/            the package root: the public functions and types
 *   src/batch/                           one batch: resolved once (manifest, root, ledger, service,
 *                                        store, settings), and the orchestration of every command
 *   src/report/, src/ui/                 what commands show (ui may use report, not the reverse)
 *   src/runner/                          one run: submit, watch, download, stop
 *   src/storage/                         where outputs go: a folder (over src/downloads) or an S3 bucket
 *   src/service-client/, src/ledger/, src/downloads/, src/manifest/   the edges the runner drives
 *   src/*.ts (errors, money, ...)        the bottom layer: imports nothing of src/
 *
 * The sandbox emulates the service, so it shares with the client only what the wire itself
 * fixes (src/service-client/schemas.ts) and the bottom layer; only src/batch/ (and the package
 * root's startSandbox) starts it.
 */
const BOTTOM = '^src/(?!index[.]ts$)[^/]+[.]ts$';
const SANDBOX = '^src/sandbox/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle makes two modules one: neither can be read, tested or moved alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A module nothing imports is dead code, or an entry point this config does not know.',
      from: { orphan: true, path: '^src/', pathNot: ['[.]d[.]ts$', '^src/cli/main[.]ts$'] },
      to: {},
    },
    {
      name: 'bottom-imports-nothing',
      severity: 'error',
      comment: 'errors.ts, money.ts and the other files directly in src/ are below every layer.',
      from: { path: BOTTOM },
      to: { path: '^src/.+/' },
    },
    {
      name: 'nothing-imports-cli-from-below',
      severity: 'error',
      comment: 'The CLI is the top layer: a lower layer that needs something from it gets it passed in.',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'only-main-imports-dispatch',
      severity: 'error',
      comment: 'cli.ts dispatches to the commands; commands and their helpers never reach back into it.',
      from: { path: '^src/cli/', pathNot: '^src/cli/main[.]ts$' },
      to: { path: '^src/cli/(cli|main)[.]ts$' },
    },
    {
      name: 'command-helpers-below-commands',
      severity: 'error',
      comment: 'The files beside cli.ts serve every command, so they depend on none of them.',
      from: { path: '^src/cli/', pathNot: ['^src/cli/commands/', '^src/cli/(cli|main)[.]ts$'] },
      to: { path: '^src/cli/commands/' },
    },
    {
      name: 'only-cli-imports-cli',
      severity: 'error',
      comment: 'The library and the public API know no CLI: what a command decides, an API user needs too.',
      from: { path: '^src/(batch/|public/|index[.]ts$)' },
      to: { path: '^src/(cli|ui)/' },
    },
    {
      name: 'cli-is-a-client-of-the-package-root',
      severity: 'error',
      comment:
        'The CLI parses flags, calls the package root (src/index.ts) and renders its results (report, ' +
        'ui), as an API user would: it never reaches the batch, the runner, the ledger, the stores, ' +
        'the downloads, the sandbox, the service client or the manifest internals, not even for types.',
      from: { path: '^src/cli/' },
      to: {
        path: '^src/',
        pathNot: ['^src/cli/', '^src/index[.]ts$', '^src/(ui|report)/', '^src/import/render[.]ts$', BOTTOM],
      },
    },
    {
      name: 'public-functions-start-from-a-batch',
      severity: 'error',
      comment:
        'The package root reaches the runner, the ledger and the service only through src/batch/, ' +
        'where a batch is resolved once.',
      from: { path: '^src/(public/|index[.]ts$)' },
      to: { path: '^src/(runner|ledger|storage|downloads|service-client)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'report-below-ui',
      severity: 'error',
      comment: 'ui renders reports for a terminal; report builds documents and knows no terminal.',
      from: { path: '^src/report/' },
      to: { path: '^src/ui/' },
    },
    {
      name: 'runner-knows-no-presentation',
      severity: 'error',
      comment: 'The runner tells the outside through RunReporter; it never imports what shows it.',
      from: { path: '^src/runner/' },
      to: { path: '^src/(cli|report|ui)/' },
    },
    {
      name: 'edges-never-import-up',
      severity: 'error',
      comment: 'service-client, ledger, downloads, storage and manifest are driven by the runner and know nothing above.',
      from: { path: '^src/(service-client|ledger|downloads|storage|manifest)/' },
      to: { path: '^src/(runner|cli|report|ui|sandbox)/' },
    },
    {
      name: 'api-ledger-manifest-stand-alone',
      severity: 'error',
      comment: 'The typed client, the ledger and the manifest reader depend on the bottom layer only.',
      from: { path: '^src/(service-client|ledger|manifest)/' },
      to: { path: '^src/(service-client|ledger|downloads|manifest)/', pathNot: '^src/$1/' },
    },
    {
      name: 'storage-keeps-no-ledger',
      severity: 'error',
      comment: 'A store saves and checks files; the runner decides what the ledger records.',
      from: { path: '^src/storage/' },
      to: { path: '^src/ledger/' },
    },
    {
      name: 'downloads-below-storage',
      severity: 'error',
      comment: 'The disk store is built on src/downloads; downloads know no store.',
      from: { path: '^src/downloads/' },
      to: { path: '^src/storage/' },
    },
    {
      name: 'downloads-keep-no-ledger',
      severity: 'error',
      comment: 'Downloads report what they saved; the runner decides what the ledger records.',
      from: { path: '^src/downloads/' },
      to: { path: '^src/ledger/' },
    },
    {
      name: 'sandbox-shares-only-the-wire',
      severity: 'error',
      comment:
        'The emulator shares with the client only the wire schemas and the bottom layer, so a client ' +
        'bug cannot hide behind the same bug in the emulator.',
      from: { path: SANDBOX },
      to: { path: '^src/', pathNot: [SANDBOX, '^src/service-client/schemas[.]ts$', BOTTOM] },
    },
    {
      name: 'only-commands-start-the-sandbox',
      severity: 'error',
      comment: 'The library starts the emulator (a run against it, `startSandbox`); nothing else depends on it.',
      from: { path: '^src/', pathNot: [SANDBOX, '^src/batch/', '^src/index[.]ts$'] },
      to: { path: SANDBOX },
    },
    {
      name: 'not-to-dev-dep',
      severity: 'error',
      comment: 'The published CLI installs only dependencies, never devDependencies.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
