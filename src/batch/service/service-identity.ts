import { basename, dirname, join } from 'node:path';
import { shownFromCwd } from '../../documents/shown-path.js';
import { UserError } from '../../errors.js';
import { describeService, SANDBOX_IDENTITY } from '../../ledger/index.js';

/**
 * Which service a ledger belongs to (docs/services.md). A real service is known by its base URL,
 * normalised so that spelling variants (`HTTPS://Host:443/v1/`) are one service.
 */

/** Scheme, host (lower case, default port dropped) and path without trailing slashes; no credentials, query or fragment. */
export function serviceIdentity(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * Refuses, before any request, to run a ledger against a service other than its own: its done
 * items, jobs and spend would be taken for results of the new one. `bound` null: not bound yet.
 */
export function ensureSameService(
  bound: string | null,
  current: string,
  ledgerPath: string,
  cwd: string,
): void {
  if (bound === null || bound === current) return;
  const separate = join(dirname(ledgerPath), `${basename(ledgerPath, '.sqlite')}.${slug(current)}.sqlite`);
  const back = bound === SANDBOX_IDENTITY ? '`sandbox`' : `\`baseUrl\` ${bound}`;
  const ledger = shownFromCwd(cwd, separate);
  throw new UserError(
    `the ledger ${ledgerPath} belongs to ${describeService(bound)}, not ${describeService(current)}; ` +
      'nothing was sent.\n' +
      `  Its items, jobs and spend are that service's; counting them here would take them for results of ${describeService(current)}.\n` +
      `  To run against ${describeService(current)}, give it a ledger and an output folder of its own: \`ledger\` ${ledger}, and another output.dir in the manifest\n` +
      `  To go on with the ledger's own service: ${back}`,
    'ledger_other_service',
    { bound, current, ledgerPath, separateLedger: ledger },
  );
}

function slug(identity: string): string {
  if (identity === SANDBOX_IDENTITY) return 'sandbox';
  const url = new URL(identity);
  return url.host.replace(/[^A-Za-z0-9.-]+/g, '-');
}
