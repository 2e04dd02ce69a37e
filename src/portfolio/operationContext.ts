import type { PublicOperationId } from '../../generated/portfolio/rules.js';
import type { operations } from '../../generated/portfolio/types.js';
import type { OperationContext, OperationReply } from '../contract/operationContext.js';
import type { PortfolioReader } from '../store/portfolioContent.js';
import type { AuthenticatedKey } from '../auth/apiKeys.js';

export type PortfolioOperationId = keyof operations;

/** What the portfolio handlers use, built once at start-up. */
export interface PortfolioServices {
  content: PortfolioReader;
  /** The served downloads, prepared once at start-up. */
  downloads: { openapiJson: string; openapiYaml: string; postmanJson: string; changelogJson: string; referencePageHtml: string };
}

/** A portfolio handler's context: the key's tenant on every operation that needs a key. */
export type PortfolioContext<Op extends PortfolioOperationId> = OperationContext<
  operations,
  Op,
  Op extends PublicOperationId ? undefined : AuthenticatedKey,
  PortfolioServices
>;

/** A success reply; failures are thrown as `PortfolioError`s and shaped by the error funnel. */
export type PortfolioReply<Op extends PortfolioOperationId> = OperationReply<operations, Op>;

export type PortfolioHandler<Op extends PortfolioOperationId> = (ctx: PortfolioContext<Op>) => PortfolioReply<Op> | Promise<PortfolioReply<Op>>;

/** An answer encoded once per revision: valid as the 200 of every operation whose JSON it holds. */
export interface EncodedReply {
  status: 200;
  headers: Record<string, string>;
  body: Buffer;
}
