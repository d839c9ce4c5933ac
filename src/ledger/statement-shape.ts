import type { Compilable } from 'kysely';
import type { LedgerDatabase, Statement } from './dialect/database.js';
import type { LedgerContext } from './ledger-context.js';

/** What a value is replaced with while a shape is compiled: a text no ledger value holds. */
const STAND_IN = '\u0000mediabatch-shape-value:';

interface Compiled {
  statement: Statement;
  /** For each of the statement's parameters, the name of the value bound to it. */
  slots: readonly string[];
}

/**
 * A statement of one fixed shape, built and compiled by Kysely once per open database, then bound
 * to each call's values. Building a statement's tree and compiling it cost more than SQLite takes
 * to run it (about 0.1 ms, and a run writes a dozen statements per item), so the statements every
 * item writes are shapes.
 *
 * `build` is given stand-ins, never the values: it may branch on the database (`c.can`, `c.has`)
 * and on `variant`, which names every other choice of shape, but must pass each value on as it is.
 * A value it bakes in instead of taking from `values` (`c.batchId`, say) is refused when the shape
 * is first compiled, so no later call can run with an earlier call's value.
 */
export class StatementShape<V extends object, K extends string = ''> {
  readonly #build: (c: LedgerContext, values: V, variant: K) => Compilable;
  readonly #compiled = new WeakMap<LedgerDatabase, Map<K, Compiled>>();

  constructor(build: (c: LedgerContext, values: V, variant: K) => Compilable) {
    this.#build = build;
  }

  /** The statement for these values; `variant` picks among the shape's forms. */
  bind(c: LedgerContext, values: V, variant = '' as K): Statement {
    let forms = this.#compiled.get(c.db);
    if (forms === undefined) {
      forms = new Map();
      this.#compiled.set(c.db, forms);
    }
    let compiled = forms.get(variant);
    if (compiled === undefined) {
      compiled = this.#compile(c, Object.keys(values), variant);
      forms.set(variant, compiled);
    }
    const parameters = compiled.slots.map((name) => {
      const value = (values as Record<string, unknown>)[name];
      if (value === undefined) throw new Error(`statement shape: no value for "${name}"`);
      return value;
    });
    return { ...compiled.statement, parameters };
  }

  #compile(c: LedgerContext, names: readonly string[], variant: K): Compiled {
    const standIns = Object.fromEntries(names.map((name) => [name, `${STAND_IN}${name}`])) as unknown as V;
    const statement = this.#build(c, standIns, variant).compile();
    const slots = statement.parameters.map((parameter) => {
      if (typeof parameter !== 'string' || !parameter.startsWith(STAND_IN))
        throw new Error(`statement shape bakes in a value not passed to it: ${statement.sql}`);
      return parameter.slice(STAND_IN.length);
    });
    if (statement.sql.includes(STAND_IN))
      throw new Error(`statement shape writes a value into its SQL text: ${statement.sql}`);
    return { statement, slots };
  }
}
