/** One HTTP exchange of the fake ARM's REST face, as plain data (in-process, or carried over HTTPS by https-face.ts). */
export interface ArmHttpRequest {
  method: string;
  /** Path and query, e.g. /subscriptions/…?api-version=2024-07-01 */
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface ArmHttpResponse {
  status: number;
  headers: Record<string, string>;
  body?: string;
}
