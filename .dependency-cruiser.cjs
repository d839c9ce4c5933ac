/**
 * The layers of src/, checked by `npm run check:structure` (docs/architecture.md explains them).
 *
 *   src/cli/main.ts, src/cli/cli.ts      entry point and command dispatch
 *   src/cli/commands/                    one module per command: flags in, one call of the package
 *                                        root, events to renderers, the result's outcome out (cli.ts
 *                                        maps it to the exit code with exit-codes.ts); beside it, its
 *                                        flag table (<name>-flags.ts), which loads no library
 *   the rest of src/cli/                 what commands share: flags and their values, parsing, help,
 *                                        io, the live view
 *   src/index.ts, src/render.ts          the package's entry points: the public functions and types,
 *                                        and the renderers of their documents (mediabatch/render)
 *   src/commands/<name>/                 one folder per command: its public function, its
 *                                        orchestration and its decisions side by side; a command
 *                                        folder never imports another
 *   src/batch/                           what the commands share: one batch resolved once (manifest,
 *                                        root, ledger, service, store, settings), the checks
 *                                        `run` and the others make, the plan and the gallery page
 *   src/documents/                       what commands show: documents and their renderers
 *   src/cli/ui/                          the CLI's terminal views of a run
 *   src/runner/                          one run: submit, watch, download, stop
 *   src/storage/                         where outputs go: a folder (over src/downloads) or an S3 bucket
 *   src/service-client/, src/ledger/, src/downloads/, src/manifest/   the edges the runner drives
 *   src/*.ts (errors, codes, money, ...) the bottom layer: imports nothing of src/; exit-codes.ts
 *                                        is the CLI's (and the package root's) alone
 *
 * The sandbox emulates the service, so it shares with the client only what the wire itself
 * fixes (src/service-client/schemas.ts) and the bottom layer; only src/batch/ (and the package
 * root's startSandbox) starts it.
 */
const BOTTOM = '^src/(?!(index|render)[.]ts$)[^/]+[.]ts$';
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
      from: { orphan: true, path: '^src/', pathNot: ['[.]d[.]ts$', '^src/cli/main[.]ts$', '^src/render[.]ts$'] },
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
      name: 'exit-codes-are-the-clis',
      severity: 'error',
      comment:
        'The library speaks codes and outcomes, never exit codes: exit-codes.ts maps them for the CLI, the ' +
        'package root (for programs that exit as the CLI does) and the two records documented to hold one ' +
        "(a run's row in the ledger, written by run-batch.ts, and a run's notification, run-notice.ts).",
      from: {
        path: '^src/',
        pathNot: ['^src/cli/', '^src/index[.]ts$', '^src/commands/run/run-(batch|notice)[.]ts$'],
      },
      to: { path: '^src/exit-codes[.]ts$' },
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
      comment:
        'The files beside cli.ts serve every command, so they depend on none of them; flags.ts reads ' +
        "each command's flag table (commands/<name>-flags.ts) to assemble the CLI's.",
      from: { path: '^src/cli/', pathNot: ['^src/cli/commands/', '^src/cli/(cli|main)[.]ts$'] },
      to: { path: '^src/cli/commands/', pathNot: '^src/cli/commands/[^/]+-flags[.]ts$' },
    },
    {
      name: 'flag-tables-load-no-library',
      severity: 'error',
      comment:
        "A command's flag table is read by the parser and help before any command runs: it names rows " +
        '(flag-row.ts, shared-flags.ts) and loads nothing of the library.',
      from: { path: '^src/cli/commands/[^/]+-flags[.]ts$' },
      to: { pathNot: '^src/cli/(flag-row|flag-kinds|shared-flags)[.]ts$' },
    },
    {
      name: 'only-cli-imports-cli',
      severity: 'error',
      comment: 'The library and the public API know no CLI: what a command decides, an API user needs too.',
      from: { path: '^src/(batch/|commands/|documents/|index[.]ts$|render[.]ts$)' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'cli-is-a-client-of-the-package-root',
      severity: 'error',
      comment:
        'The CLI parses flags, calls the package root (src/index.ts) and renders its results through ' +
        'the package\'s render entry point (src/render.ts), drawing a run with its own terminal views ' +
        '(cli/ui/), as an API user would: it never reaches a command, the batch, the runner, the ' +
        'ledger, the stores, the downloads, the sandbox, the service client or the manifest ' +
        'internals, not even for types.',
      from: { path: '^src/cli/' },
      to: {
        path: '^src/',
        pathNot: ['^src/cli/', '^src/(index|render)[.]ts$', BOTTOM],
      },
    },
    {
      name: 'entry-points-hand-on-commands',
      severity: 'error',
      comment:
        'The package root and the render entry point hand on what the commands and the batch offer; ' +
        'they reach the runner, the ledger and the service only through a command (render.ts also ' +
        'hands on what a view of a run is told, and the budget\'s words it shows).',
      from: { path: '^src/(index|render)[.]ts$' },
      to: {
        path: '^src/(runner|ledger|storage|downloads|service-client)/',
        pathNot: '^src/runner/(run-observer|budget-words)[.]ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'commands-never-import-each-other',
      severity: 'error',
      comment:
        'A command folder never imports another: what two commands share lives below them (src/batch/, ' +
        'src/documents/), so a change to one command is made in one place and reaches the other from there.',
      from: { path: '^src/commands/([^/]+)/' },
      to: { path: '^src/commands/', pathNot: '^src/commands/$1/' },
    },
    {
      name: 'batch-knows-no-command',
      severity: 'error',
      comment: 'src/batch/ is what every command shares: it serves the commands and depends on none of them.',
      from: { path: '^src/batch/' },
      to: { path: '^src/commands/' },
    },
    {
      name: 'documents-render-what-commands-decide',
      severity: 'error',
      comment:
        'documents/ renders documents and decides nothing: it may name a command\'s document type, never ' +
        'call into a command.',
      from: { path: '^src/documents/' },
      to: { path: '^src/(commands|batch)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'runner-knows-no-presentation',
      severity: 'error',
      comment: 'The runner tells the outside through RunReporter; it never imports what shows it.',
      from: { path: '^src/runner/' },
      to: { path: '^src/(cli|documents|commands|batch)/' },
    },
    {
      name: 'edges-never-import-up',
      severity: 'error',
      comment: 'service-client, ledger, downloads, storage and manifest are driven by the runner and know nothing above.',
      from: { path: '^src/(service-client|ledger|downloads|storage|manifest)/' },
      to: { path: '^src/(runner|cli|documents|sandbox|commands|batch)/' },
    },
    {
      name: 'api-ledger-manifest-stand-alone',
      severity: 'error',
      comment: 'The typed client, the ledger and the manifest reader depend on the bottom layer only.',
      from: { path: '^src/(service-client|ledger|manifest)/' },
      to: { path: '^src/(service-client|ledger|downloads|manifest)/', pathNot: '^src/$1/' },
    },
    {
      name: 'ledger-has-one-door',
      severity: 'error',
      comment:
        'Outside src/ledger/, the ledger is reached through src/ledger/index.ts alone: what it offers ' +
        'is said there, once, and its files can change behind it.',
      from: { path: '^src/', pathNot: '^src/ledger/' },
      to: { path: '^src/ledger/', pathNot: '^src/ledger/index[.]ts$' },
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
      from: { path: '^src/', pathNot: [SANDBOX, '^src/batch/', '^src/commands/', '^src/index[.]ts$'] },
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
