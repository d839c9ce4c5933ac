/**
 * A database URL as people may see it: its password left out (PGPASSWORD, or the URL its owner
 * holds, gives it again). The one rule every place that shows a ledger follows: the command line
 * a command suggests, and a shared ledger's shown address, which its errors, events, gallery and
 * output marker name. Anything else, such as a ledger file's path, is returned as it is.
 */
export function withoutPassword(address: string): string {
  return address.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/i, '$1@');
}
