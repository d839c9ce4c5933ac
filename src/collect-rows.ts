/** The rows of a streamed read, gathered, for a reader that needs them all at once (Node 20 has no Array.fromAsync). */
export async function collectRows<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const row of rows) all.push(row);
  return all;
}
