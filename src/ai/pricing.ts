// What a call costs: its token usage times the deployment's price table, in the ledger's unit, the
// millicent (a thousandth of a US cent), rounded up so that a call is never charged less than it cost.
import type { AiTokenUsage } from './provider.js';

/** US cents per million tokens; the same table for every provider (configuration, not the contract). */
export interface AiPriceTable {
  inputCentsPerMillionTokens: number;
  outputCentsPerMillionTokens: number;
}

export const MILLICENTS_PER_CENT = 1000;

/** Prices are taken to a thousandth of a cent per million tokens, so the product is exact in integers. */
const priceUnits = (centsPerMillion: number) => Math.round(centsPerMillion * 1000);

export function costMillicents(usage: AiTokenUsage, prices: AiPriceTable): number {
  const units = usage.promptTokens * priceUnits(prices.inputCentsPerMillionTokens) + usage.completionTokens * priceUnits(prices.outputCentsPerMillionTokens);
  // units are thousandths of a cent per million tokens: millicents × 10^6.
  return Math.ceil(units / 1_000_000);
}

/** Millicents as cents with up to 3 decimals, exactly as the ledger holds them. */
export function centsOf(millicents: number): number {
  return Number((millicents / MILLICENTS_PER_CENT).toFixed(3));
}
