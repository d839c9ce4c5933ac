/** A few ids, then how many more: one line however many items a step moves. */
export function namesOf(ids: readonly string[]): string {
  const shown = ids.slice(0, 5).join(', ');
  return ids.length > 5 ? `${shown} and ${ids.length - 5} more item(s)` : shown;
}
