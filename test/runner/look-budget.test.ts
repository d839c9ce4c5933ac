import { describe, expect, it } from 'vitest';
import { LookBudget } from '../../src/runner/look-budget.js';

describe('LookBudget', () => {
  it('starts with nothing sent, no polls and nothing earned', () => {
    const budget = new LookBudget();
    expect(budget.polls).toBe(0);
    expect(budget.earnedByEnded).toBe(0);
    expect(budget.sentSince(Number.NEGATIVE_INFINITY)).toEqual([]);
  });

  it('counts only the looks as polls, and every request as sent', () => {
    const budget = new LookBudget();
    budget.sent(100, true);
    budget.sent(200, false);
    budget.sent(300, true);
    expect(budget.polls).toBe(2);
    expect(budget.sentSince(0)).toEqual([100, 200, 300]);
  });

  it('lists the requests strictly after `since`, oldest first', () => {
    const budget = new LookBudget();
    for (const at of [10, 20, 30, 40]) budget.sent(at, false);
    expect(budget.sentSince(20)).toEqual([30, 40]);
    expect(budget.sentSince(19)).toEqual([20, 30, 40]);
    expect(budget.sentSince(40)).toEqual([]);
  });

  it('adds up what a per-job poller would have polled for the jobs that ended', () => {
    const budget = new LookBudget();
    budget.jobEnded(3);
    budget.jobEnded(5);
    expect(budget.earnedByEnded).toBe(8);
    expect(budget.polls).toBe(0);
  });

  it('keeps the newest 4096 request times and drops the oldest, while polls keep counting', () => {
    const budget = new LookBudget();
    for (let at = 1; at <= 4096; at += 1) budget.sent(at, true);
    // Exactly the cap: nothing is dropped yet.
    expect(budget.sentSince(0)).toHaveLength(4096);
    expect(budget.sentSince(0)[0]).toBe(1);
    budget.sent(4097, true);
    budget.sent(4098, false);
    const kept = budget.sentSince(0);
    expect(kept).toHaveLength(4096);
    expect(kept[0]).toBe(3);
    expect(kept.at(-1)).toBe(4098);
    expect(budget.polls).toBe(4097);
  });
});
