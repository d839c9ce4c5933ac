import { describe, expect, it } from 'vitest';
import { accountSchema } from '../../src/service-client/schemas.js';

const account = (amount: string) => ({
  object: 'account',
  balance: { amount_usd: amount, enabled: true },
  concurrency: { active: 0, limit: 3 },
});

describe('the client reads money only as the service promises it: six decimal places', () => {
  it.each(['0.000000', '12.500000', '100000.000001'])('accepts %s', (amount) => {
    expect(accountSchema.safeParse(account(amount)).success).toBe(true);
  });
  it.each(['1', '1.5', '0.25', '1.0000000', '-1.000000', '1e3', ' 1.000000', '1,000000'])(
    'refuses %s',
    (amount) => {
      expect(accountSchema.safeParse(account(amount)).success).toBe(false);
    },
  );
});
