/**
 * @messaging-gateway/client: a typed client of the messaging gateway's
 * HTTP interfaces (Gateway, Legacy v2, operator API, panel API), generated
 * from the gateway's own OpenAPI document (schema.d.ts, `npm run
 * client:generate`) and sent with openapi-fetch.
 */
import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
export type GatewayClient = Client<paths>;

export interface GatewayClientOptions extends ClientOptions {
  /** The account's API key, sent as `x-api-key` (Gateway) and `auth-key` (Legacy v2). */
  apiKey?: string;
  /** The operator token, sent as `Authorization: Bearer` (operator API). */
  operatorToken?: string;
}

/** A client of one gateway; `baseUrl` is its address, e.g. `http://localhost:3000`. */
export function createGatewayClient(options: GatewayClientOptions = {}): GatewayClient {
  const { apiKey, operatorToken, headers, ...rest } = options;
  const credentials: Record<string, string> = {};
  if (apiKey) Object.assign(credentials, { 'x-api-key': apiKey, 'auth-key': apiKey });
  if (operatorToken) credentials.authorization = `Bearer ${operatorToken}`;
  return createFetchClient<paths>({ ...rest, headers: { ...credentials, ...(headers as Record<string, string> | undefined) } });
}
