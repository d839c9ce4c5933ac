import { parseUsdStrict } from '../money.js';
import type { SandboxConfig } from './config.js';

/** What the price of a job depends on, after defaults are applied to the submitted input. */
export interface PricedInput {
  seconds: number;
  definition: string;
}

/** Cost in integer micro-dollars: the per-second price of the definition times the duration. */
export function priceMicros(config: SandboxConfig, input: PricedInput): number {
  const perSecond = config.prices.per_second_usd[input.definition];
  if (perSecond === undefined) throw new RangeError(`no price for definition ${input.definition}`);
  return parseUsdStrict(perSecond) * input.seconds;
}
