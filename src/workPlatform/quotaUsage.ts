/** Reads this month's count of token calls for `GET /v1/workspace/limits`. */
export interface QuotaUsage {
  quotaUsage(workspaceId: string, now: number): { used: number; resetAt: number };
}
