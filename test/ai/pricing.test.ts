import { describe, expect, it } from 'vitest';
import { centsOf, costMillicents } from '../../src/ai/pricing.js';

describe('costMillicents', () => {
  it('is prompt tokens × the input price + completion tokens × the output price, per million, in millicents rounded up', () => {
    const prices = { inputCentsPerMillionTokens: 15, outputCentsPerMillionTokens: 60 };
    expect(costMillicents({ promptTokens: 1_000_000, completionTokens: 0 }, prices)).toBe(15_000);
    expect(costMillicents({ promptTokens: 0, completionTokens: 1_000_000 }, prices)).toBe(60_000);
    // 100 × 15 + 10 × 60 = 2100 cent-tokens per million = 2.1 millicents: charged 3, never less than it cost.
    expect(costMillicents({ promptTokens: 100, completionTokens: 10 }, prices)).toBe(3);
    expect(costMillicents({ promptTokens: 0, completionTokens: 0 }, prices)).toBe(0);
  });

  it('is exact for prices with decimals, where floating-point products are not', () => {
    // 0.1 × 3 is 0.30000000000000004 in floating point; a ceiling of that would charge one millicent too many.
    const prices = { inputCentsPerMillionTokens: 0.1, outputCentsPerMillionTokens: 0.2 };
    expect(costMillicents({ promptTokens: 30_000, completionTokens: 0 }, prices)).toBe(3);
    expect(costMillicents({ promptTokens: 10_000, completionTokens: 10_000 }, { inputCentsPerMillionTokens: 2.5, outputCentsPerMillionTokens: 7.5 })).toBe(100);
  });
});

describe('centsOf', () => {
  it('shows millicents as cents with up to 3 decimals', () => {
    expect(centsOf(2935)).toBe(2.935);
    expect(centsOf(1)).toBe(0.001);
    expect(centsOf(500_000)).toBe(500);
  });
});
