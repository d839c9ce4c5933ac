import { describe, expect, it } from 'vitest';
import { jobListSchema, type MediaGenClient } from '../../src/service-client/index.js';
import { body, clientFor, expectEnvelope, type FakeClock, newKey, raw, setup, T0 } from './helpers.js';

const MANY = {
  workspaces: [{ id: 'ws_demo', balance_usd: '1000', wallet_enabled: true, concurrency_limit: 1000 }],
};

async function createJobs(
  client: MediaGenClient,
  count: number,
  clock?: FakeClock,
  prompt = 'job',
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await client.createVideoJob(body(`${prompt} ${i}`), newKey())).data.id);
    clock?.advance(0.01);
  }
  return ids;
}

const ids = (page: { data: { data: Array<{ id: string }> } }) => page.data.data.map((job) => job.id);

describe('sandbox: GET /jobs', () => {
  it('lists newest first; jobs created in the same millisecond keep a stable order', async () => {
    const { client, clock } = await setup(MANY);
    const spaced = await createJobs(client, 3, clock);
    const sameInstant = await createJobs(client, 3);
    const page = await client.listJobs();
    expect(page.data).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(ids(page)).toEqual([...sameInstant].reverse().concat([...spaced].reverse()));
  });

  it('defaults to 20 per page and accepts limit 1..100 only', async () => {
    const { sandbox, client } = await setup(MANY);
    await createJobs(client, 25);
    const first = await client.listJobs();
    expect(first.data.data).toHaveLength(20);
    expect(first.data.has_more).toBe(true);
    expect(first.data.next_cursor).toEqual(expect.any(String));
    expect((await client.listJobs({ limit: 1 })).data.data).toHaveLength(1);
    expect((await client.listJobs({ limit: 100 })).data.data).toHaveLength(25);
    for (const limit of ['0', '101', 'abc', '-1', '2.5', '']) {
      const response = await raw(sandbox, 'GET', `/jobs?limit=${limit}`);
      expectEnvelope(response, 400, 'invalid_request', 'invalid_parameter', 'limit');
    }
  });

  it('pages through more than 100 jobs with next_cursor, none skipped or repeated', async () => {
    const { client, clock } = await setup(MANY);
    const created = await createJobs(client, 130, clock);
    const pages: string[][] = [];
    for await (const page of client.listJobPages({ limit: 100 })) pages.push(ids(page));
    expect(pages.map((page) => page.length)).toEqual([100, 30]);
    expect(pages.flat()).toEqual([...created].reverse());
  });

  it('keeps later pages stable when jobs are created while paging', async () => {
    const { client, clock } = await setup(MANY);
    const created = await createJobs(client, 10, clock);
    const first = await client.listJobs({ limit: 4 });
    await createJobs(client, 3, clock, 'newer');
    const second = await client.listJobs({ limit: 4, cursor: first.data.next_cursor ?? '' });
    expect([...ids(first), ...ids(second)]).toEqual([...created].reverse().slice(0, 8));
  });

  it('rejects a cursor it did not issue', async () => {
    const { sandbox } = await setup();
    const forged = Buffer.from(JSON.stringify({ v: 2 })).toString('base64url');
    for (const cursor of ['garbage!', forged, 'e30']) {
      const response = await raw(sandbox, 'GET', `/jobs?cursor=${encodeURIComponent(cursor)}`);
      expectEnvelope(response, 400, 'invalid_request', 'invalid_parameter', 'cursor');
    }
  });

  it('filters by status list (as of now), rejecting unknown statuses', async () => {
    const { sandbox, client, clock } = await setup(MANY);
    const [done] = await createJobs(client, 1);
    const failed = (await client.createVideoJob(body('x [[reject:content_rejected]]'), newKey())).data.id;
    clock.advance(3);
    const [queued] = await createJobs(client, 1);
    clock.advance(1.5);
    const [waiting] = await createJobs(client, 1);
    const unfinished = await client.listJobs({ status: ['queued', 'running'], limit: 100 });
    expect(ids(unfinished)).toEqual([waiting, queued]);
    expect(ids(await client.listJobs({ status: ['succeeded'] }))).toEqual([done]);
    expect(ids(await client.listJobs({ status: ['failed', 'canceled'] }))).toEqual([failed]);
    const repeated = await raw(sandbox, 'GET', '/jobs?status=running&status=queued');
    expect(ids({ data: jobListSchema.parse(repeated.json) })).toEqual([waiting, queued]);
    for (const status of ['done', 'queued,', 'QUEUED', '']) {
      const response = await raw(sandbox, 'GET', `/jobs?status=${status}`);
      expectEnvelope(response, 400, 'invalid_request', 'invalid_parameter', 'status');
    }
  });

  it('filters by api_key_id (>= 1) and only ever shows the workspace of the key', async () => {
    const { sandbox, client } = await setup({
      keys: [
        { key: 'mg_test_alpha_000001', id: 1, workspace: 'ws_a' },
        { key: 'mg_test_alpha_000002', id: 2, workspace: 'ws_a' },
        { key: 'mg_test_bravo_000003', id: 3, workspace: 'ws_b' },
      ],
      workspaces: [
        { id: 'ws_a', balance_usd: '10', wallet_enabled: true, concurrency_limit: 10 },
        { id: 'ws_b', balance_usd: '10', wallet_enabled: true, concurrency_limit: 10 },
      ],
    });
    const [byOne] = await createJobs(client, 1);
    const [byTwo] = await createJobs(clientFor(sandbox, 'mg_test_alpha_000002'), 1);
    await createJobs(clientFor(sandbox, 'mg_test_bravo_000003'), 1);
    expect(ids(await client.listJobs())).toEqual([byTwo, byOne]);
    expect(ids(await client.listJobs({ api_key_id: 2 }))).toEqual([byTwo]);
    expect(ids(await client.listJobs({ api_key_id: 3 }))).toEqual([]);
    for (const value of ['0', 'x', '-2', '1.5']) {
      const response = await raw(sandbox, 'GET', `/jobs?api_key_id=${value}`);
      expectEnvelope(response, 400, 'invalid_request', 'invalid_parameter', 'api_key_id');
    }
  });

  it('created_after is inclusive, created_before exclusive; bad dates are rejected', async () => {
    const { sandbox, client, clock } = await setup(MANY);
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      created.push(...(await createJobs(client, 1)));
      clock.advance(1);
    }
    const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
    expect(ids(await client.listJobs({ created_after: at(1) }))).toEqual([created[2], created[1]]);
    expect(ids(await client.listJobs({ created_before: at(1) }))).toEqual([created[0]]);
    expect(ids(await client.listJobs({ created_after: at(1), created_before: at(2) }))).toEqual([created[1]]);
    expect(ids(await client.listJobs({ created_after: '2030-01-01T01:00:01+01:00' }))).toEqual([
      created[2],
      created[1],
    ]);
    for (const [name, value] of [
      ['created_after', 'yesterday'],
      ['created_after', '2030-13-01T00:00:00Z'],
      ['created_before', '2030-01-01'],
      ['created_before', ''],
    ] as const) {
      const response = await raw(sandbox, 'GET', `/jobs?${name}=${encodeURIComponent(value)}`);
      expectEnvelope(response, 400, 'invalid_request', 'invalid_parameter', name);
    }
  });

  it('page_size_cap returns pages shorter than limit, and paging still reaches every job', async () => {
    const { client, clock } = await setup({ ...MANY, page_size_cap: 7 });
    const created = await createJobs(client, 20, clock);
    const first = await client.listJobs({ limit: 100 });
    expect(first.data.data).toHaveLength(7);
    expect(first.data.has_more).toBe(true);
    const all: string[] = [];
    for await (const page of client.listJobPages({ limit: 100 })) all.push(...ids(page));
    expect(all).toEqual([...created].reverse());
  });

  it('pages by time, then creation, in every window, also after the clock went back', async () => {
    // Pages are found by bisection while jobs are made in time order; a clock that went back
    // turns that off, and both ways must give the same pages.
    const { client, clock } = await setup(MANY);
    const [e0, e1, e2, e3, e4, e5] = await createJobs(client, 6, clock); // T0 + 0, 10 ... 50 ms
    clock.advance(-0.035);
    const [l0, l1, l2, l3, l4, l5] = await createJobs(client, 6, clock); // T0 + 25, 35 ... 75 ms
    const newestFirst = [l5, l4, l3, e5, l2, e4, l1, e3, l0, e2, e1, e0];
    const pages: string[][] = [];
    for await (const page of client.listJobPages({ limit: 4 })) pages.push(ids(page));
    expect(pages.map((page) => page.length)).toEqual([4, 4, 4]);
    expect(pages.flat()).toEqual(newestFirst);
    const at = (ms: number) => new Date(T0 + ms).toISOString();
    const window = await client.listJobs({ created_after: at(20), created_before: at(50), limit: 100 });
    expect(ids(window)).toEqual([l2, e4, l1, e3, l0, e2]);
  });

  it('finds windows and pages by bisection as a pass over every job would', async () => {
    const { client, clock } = await setup(MANY);
    const created = await createJobs(client, 40, clock); // T0 + 0, 10 ... 390 ms
    const sameInstant = await createJobs(client, 5, undefined, 'same instant'); // T0 + 400 ms
    const at = (ms: number) => new Date(T0 + ms).toISOString();
    const window = await client.listJobs({ created_after: at(100), created_before: at(250), limit: 100 });
    expect(ids(window)).toEqual(created.slice(10, 25).reverse());
    const newestFirst = [...sameInstant.reverse(), ...created.slice(10).reverse()];
    const pages: string[][] = [];
    for await (const page of client.listJobPages({ created_after: at(100), limit: 7 })) pages.push(ids(page));
    expect(pages.map((page) => page.length)).toEqual([7, 7, 7, 7, 7]);
    expect(pages.flat()).toEqual(newestFirst);
  });
});
