import type { Reply } from '../contract/reply.js';
import type { PortfolioReader } from './portfolioReader.js';

/** What a portfolio operation handler sees: the caller's tenant, validated parameters and the store. */
export interface PortfolioContext {
  requestId: string;
  /** The tenant of the presented API key ('' on public operations). */
  tenantId: string;
  /** Path parameters, validated. */
  params: Record<string, string>;
  /** Query parameters, validated, coerced and with their defaults filled in. */
  query: Record<string, unknown>;
  content: PortfolioReader;
  downloads: { openapiJson: string; openapiYaml: string; postmanJson: string };
  now: () => number;
}

export type PortfolioHandler = (ctx: PortfolioContext) => Reply | Promise<Reply>;
