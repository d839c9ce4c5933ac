import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { checkNames, checkPayments, command, lostRequests } from './path-checks.js';
import type { KillAfter } from './path-steps.js';
import type { JobFacts, PathsWorld } from './paths-world.js';

/**
 * The run steps: to the end, killed, redo, --regenerate-expired. Each learns which requests were
 * lost before it (a payment for one of those is allowed), and a run to the end checks invariant 6
 * (plan --json priced exactly what the run paid for) and, when it exits 0, invariant 5 (a plain
 * re-run sends nothing).
 */
const RUN = ['--poll-interval', '0.1'];

interface PlanLine {
  id: string;
  plan: string;
  estimate_usd: string | null;
}

interface PlanDocument {
  items: PlanLine[];
}

/** `plan --json` (read-only, checked as any command); an empty plan when it does not exit 0. */
async function planDocument(
  world: PathsWorld,
  extra: string[],
): Promise<PlanDocument & { code: number | null }> {
  // --verify: the test alters files keeping their size and time, which plan's default stat cannot see.
  const plan = await command(world, ['plan', world.manifest, '--json', '--verify', ...extra], {
    readOnly: true,
  });
  if (plan.code !== 0) return { code: plan.code, items: [] };
  return { code: plan.code, ...(JSON.parse(plan.stdout) as PlanDocument) };
}

function newJobs(world: PathsWorld, before: ReadonlySet<string>): JobFacts[] {
  return [...world.jobs.values()].filter((job) => !before.has(job.id));
}

/** A run that pays for a request whose result was lost is allowed that one payment. */
function allowLost(world: PathsWorld, lost: ReadonlySet<string>, made: readonly JobFacts[]): void {
  for (const request of lost)
    if (made.some((job) => job.request === request))
      world.extraPays.set(request, (world.extraPays.get(request) ?? 0) + 1);
}

/** After a run that exited 0: a plain re-run sends nothing, and the step's checks look at requests too. */
async function rerunSendsNothing(world: PathsWorld): Promise<void> {
  world.cleanRun = true;
  const posts = () => world.sandbox.records().requests.filter((request) => request.method === 'POST');
  const before = posts().length;
  await command(world, ['run', world.manifest, ...RUN]);
  const sent = posts().slice(before);
  if (sent.length > 0) {
    const items = sent.map((post) => world.jobs.get(post.jobId ?? '')?.item ?? post.idempotencyKey);
    world.violated('5 re-run after exit 0 sent', `${sent.length} POST(s), for ${items.join(', ')}`);
  }
}

/**
 * `run` to its end (with `extra` options), checked against `plan --json` with the same options:
 * the items plan prices are the items the run pays for. An item plan calls `in_flight` may be paid
 * for or not: plan reads no job, and only the service knows whether a POST no answer was recorded
 * for reached it (the run sends it again under its key) or whether a job's outputs expired since.
 */
export async function fullRun(world: PathsWorld, extra: string[] = []): Promise<void> {
  const lost = lostRequests(world);
  const plan = await planDocument(world, extra);
  const priced = new Set(plan.items.filter((line) => line.estimate_usd !== null).map((line) => line.id));
  const unknown = new Set(plan.items.filter((line) => line.plan === 'in_flight').map((line) => line.id));
  const before = new Set(world.jobs.keys());
  const run = await command(world, ['run', world.manifest, ...RUN, ...extra]);
  const made = newJobs(world, before);
  allowLost(world, lost, made);
  // A payment the run should not have made is the cause; a plan that did not foresee it, the symptom.
  checkPayments(world);
  const paid = new Set(made.map((job) => job.item));
  const unforeseen = [...paid].filter((id) => !priced.has(id) && !unknown.has(id));
  const unpaid = [...priced].filter((id) => !paid.has(id));
  if (unforeseen.length > 0 || unpaid.length > 0)
    world.violated(
      '6 plan is not the run',
      `plan ${extra.join(' ')} (exit ${plan.code}) priced [${[...priced].sort().join(', ')}]; the run (exit ${run.code}) ` +
        `paid for [${[...paid].sort().join(', ')}]; plan said ${plan.items.map((line) => `${line.id}: ${line.plan}`).join(', ')}`,
    );
  if (run.code === 0) await rerunSendsNothing(world);
}

/** `run` killed with SIGKILL once `count` POSTs, downloads or new videos are seen (or run to its end). */
export async function killedRun(world: PathsWorld, after: KillAfter, count: number): Promise<void> {
  const lost = lostRequests(world);
  const before = new Set(world.jobs.keys());
  const run = await command(world, ['run', world.manifest, ...RUN], { kill: { after, count } });
  const made = newJobs(world, before);
  allowLost(world, lost, made);
  if (!run.killed && run.code === 0) await rerunSendsNothing(world);
}

function attemptCounts(world: PathsWorld): Map<string, number> {
  if (!existsSync(world.ledger)) return new Map();
  let db: Database.Database | undefined;
  try {
    db = new Database(world.ledger, { readonly: true, fileMustExist: true });
    const rows = db.prepare('SELECT item_id, COUNT(*) AS n FROM attempts GROUP BY item_id').all() as Array<{
      item_id: string;
      n: number;
    }>;
    return new Map(rows.map((row) => [row.item_id, row.n]));
  } catch {
    return new Map();
  } finally {
    db?.close();
  }
}

/** `run --redo ID`: each of the item's requests whose new attempt the ledger records may be paid once more. */
export async function redoRun(world: PathsWorld, at: number): Promise<void> {
  const item = world.items[at % world.items.length]!;
  const asked = world.ledgerItems().filter((entry) => entry.of === item.id);
  const attempts = attemptCounts(world);
  const lost = lostRequests(world);
  const before = new Set(world.jobs.keys());
  const run = await command(world, ['run', world.manifest, ...RUN, '--redo', item.id]);
  const after = attemptCounts(world);
  for (const entry of asked)
    if ((after.get(entry.id) ?? 0) > (attempts.get(entry.id) ?? 0))
      world.extraPays.set(entry.request, (world.extraPays.get(entry.request) ?? 0) + 1);
  const made = newJobs(world, before);
  allowLost(world, lost, made);
  if (run.code === 0) await rerunSendsNothing(world);
}

/** What is checked after every step, whatever it was. */
export async function checkAfterStep(world: PathsWorld): Promise<void> {
  checkPayments(world);
  await checkNames(world, world.cleanRun);
  world.cleanRun = false;
}
