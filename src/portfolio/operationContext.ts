import type { operations } from '../../generated/portfolio/types.js';
import type { PortfolioReader } from '../store/portfolioContent.js';

export type PortfolioOperationId = keyof operations;

type Parameters<Op extends PortfolioOperationId> = operations[Op]['parameters'];
type SuccessContent<Op extends PortfolioOperationId> = operations[Op]['responses'][200]['content'];

/** Query parameters after validation: coerced, and with the contract's defaults filled in. */
export type QueryOf<Op extends PortfolioOperationId> = Required<NonNullable<Parameters<Op>['query']>>;
export type PathParamsOf<Op extends PortfolioOperationId> = NonNullable<Parameters<Op>['path']>;
/**
 * The 200 body the contract declares: a JSON schema type, or that type already serialized (text,
 * or bytes encoded once and reused), or text for other media types.
 */
export type SuccessBodyOf<Op extends PortfolioOperationId> =
  SuccessContent<Op> extends { 'application/json': infer Body } ? Body | string | Buffer : SuccessContent<Op>[keyof SuccessContent<Op>];

/** What a portfolio operation handler sees: the caller's tenant, validated parameters and the store. */
export interface PortfolioContext<Op extends PortfolioOperationId> {
  requestId: string;
  /** The tenant of the presented API key ('' on public operations). */
  tenantId: string;
  params: PathParamsOf<Op>;
  query: QueryOf<Op>;
  content: PortfolioReader;
  downloads: { openapiJson: string; openapiYaml: string; postmanJson: string };
  now: () => number;
}

/** A success reply; failures are thrown as `PortfolioError`s and shaped by the error funnel. */
export interface PortfolioReply<Op extends PortfolioOperationId> {
  status: 200;
  headers?: Record<string, string>;
  body: SuccessBodyOf<Op>;
}

export type PortfolioHandler<Op extends PortfolioOperationId> = (ctx: PortfolioContext<Op>) => PortfolioReply<Op>;

/** One handler per operation of the contract: a new operation in the spec is a type error here until handled. */
export type PortfolioHandlers = { [Op in PortfolioOperationId]: PortfolioHandler<Op> };
