/**
 * The service a ledger belongs to (docs/services.md) is a string: a real service's normalised
 * base URL, or this fixed name for the embedded sandbox, whose port changes every run.
 */
export const SANDBOX_IDENTITY = 'sandbox:embedded';

/** How a person reads a service identity; `option` names the sandbox's option as the reader knows it. */
export function describeService(identity: string, option = '`sandbox`'): string {
  return identity === SANDBOX_IDENTITY ? `the embedded sandbox (${option})` : identity;
}
