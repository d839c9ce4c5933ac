import { describe, expect, it } from 'vitest';
import { postgresLocation } from '../../src/ledger/open-ledger.js';
import { withoutPassword } from '../../src/without-password.js';

describe('withoutPassword: the one rule that hides a database URL password', () => {
  it('leaves the password out, and the rest as spelled', () => {
    expect(withoutPassword('postgres://render:s3cr%40t@db:5432/b?sslmode=require')).toBe(
      'postgres://render@db:5432/b?sslmode=require',
    );
    expect(withoutPassword('POSTGRESQL://u:p@h/d')).toBe('POSTGRESQL://u@h/d');
    expect(withoutPassword('postgres://u@h:5432/d')).toBe('postgres://u@h:5432/d');
    expect(withoutPassword('postgres://h:5432/d')).toBe('postgres://h:5432/d');
    expect(withoutPassword('ledgers/batch:1@x.sqlite')).toBe('ledgers/batch:1@x.sqlite');
  });

  it("is what a shared ledger's shown address passes through: no password, the address as before", () => {
    const shown = postgresLocation('postgres://render:s3cr%40t@db/batches', { PGPASSWORD: 'env' }).shown;
    expect(shown).toBe('postgres://render@db:5432/batches');
    expect(withoutPassword(shown)).toBe(shown);
  });
});
