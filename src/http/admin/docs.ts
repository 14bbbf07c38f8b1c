import { Type } from '@sinclair/typebox';
import { Nullable, RouteSchema } from './schemas.ts';
import { type DocumentedSchema, type ResponseDoc, RETRY_AFTER, component, json, operation, plainError, security } from '../openapi.ts';

/**
 * Documentation of the operator API (src/http/openapi.ts explains `x-doc`).
 * Its routes have no `response` schemas: they answer what the operator use
 * cases return, serialized as it is. The answer schemas below are for the
 * document only, so that documenting them cannot change a byte of an answer.
 */

const Account = component(
  'OperatorAccount',
  Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    role: Type.Union([Type.Literal('CUSTOMER'), Type.Literal('RESELLER')]),
    timezone: Type.String({ description: 'IANA time zone of the account (Legacy v2 dates, schedule dates)' }),
    balance: Type.Number({ description: 'In currency units, at most 6 decimals' }),
    active: Type.Boolean({ description: "false: deactivated, its keys (and its child users' keys) are refused" }),
  }),
);
const IssuedKey = component(
  'IssuedApiKey',
  Type.Object({ id: Type.Integer(), key: Type.String({ description: 'The API key: shown only in this answer (the gateway keeps a hash)' }) }),
);
const Balance = component('OperatorBalance', Type.Object({ balance: Type.Number({ description: 'The balance after the entry' }) }));
const Route = component('OperatorRoute', RouteSchema);
const CreatedGroup = component(
  'CreatedContactGroup',
  Type.Object({
    id: Type.Integer(),
    added: Type.Integer({ description: 'Numbers stored (duplicates once)' }),
    invalid: Type.Array(Type.String(), { description: 'Numbers refused: not valid international phones' }),
  }),
);
const Cluster = component(
  'Cluster',
  Type.Object({
    processes: Type.Array(
      Type.Object({
        id: Type.String({ description: 'Chosen by the process when it started' }),
        role: Type.Union([Type.Literal('all'), Type.Literal('api'), Type.Literal('dispatch')], { description: 'GATEWAY_ROLE' }),
        host: Type.String(),
        pid: Type.Integer(),
        startedAt: Type.String({ format: 'date-time' }),
        lastSeenAt: Type.String({ format: 'date-time' }),
        connectors: Type.Array(Type.String(), { description: 'The carrier connections it runs (none for an api process)' }),
        self: Type.Boolean({ description: 'The process that answered' }),
      }),
    ),
    outbox: Type.Array(
      Type.Object({
        connector: Type.String(),
        queued: Type.Integer({ description: 'Messages waiting in the outbox, due' }),
        scheduled: Type.Integer({ description: 'Messages scheduled for later' }),
        sending: Type.Integer({ description: 'Messages claimed, waiting for the carrier' }),
      }),
    ),
  }),
);
const Carriers = component(
  'CarrierConnections',
  Type.Array(
    Type.Object({
      name: Type.String(),
      channels: Type.Array(Type.Union([Type.Literal('SMS'), Type.Literal('RCS')])),
      ready: Type.Boolean({ description: 'Takes messages now (bind up)' }),
      capacity: Type.Integer({ description: 'Messages it can take now (free window)' }),
      queued: Type.Integer({ description: 'Messages waiting in the outbox, due' }),
      sending: Type.Integer({ description: 'Messages claimed, waiting for the carrier' }),
      scheduled: Type.Integer({ description: 'Messages scheduled for later' }),
      submitted: Type.Object(
        {
          accepted: Type.Integer({ description: 'The carrier took the message' }),
          retry: Type.Integer({ description: 'Refused for now (throttled, window full, bind lost): the message is sent again later' }),
          failed: Type.Integer({ description: 'Refused for good: the message FAILED' }),
        },
        {
          description:
            'Submits this process made on the connection since it started, by the answer (the same as `gateway_carrier_submits_total` of /metrics); a rate is the difference between two reads over the time between them',
        },
      ),
    }),
  ),
);
const LegSchema = Type.Object({
  connector: Type.String({ description: 'Carrier connection carrying the messages of this leg' }),
  prefixes: Type.Array(Type.String({ pattern: '^\\d{1,15}$' }), { description: 'Receiver prefixes (digits, international form); empty: any receiver' }),
  priority: Type.Integer({ description: 'Lower first: the first matching priority carries the message' }),
  weight: Type.Integer({ minimum: 1, description: 'Share of the messages among matching legs of the same priority' }),
});
const RouteLegs = component(
  'RouteLegs',
  Type.Object({
    routeId: Type.Integer(),
    legs: Type.Array(LegSchema, { description: "In order; empty: the route's connector carries every message" }),
  }),
);
const OperatorMessage = component(
  'OperatorMessage',
  Type.Object({
    id: Type.String(),
    accountId: Type.Integer(),
    requestId: Type.String(),
    source: Type.String({
      description: 'Where the send came from: gateway (HTTP), legacy (Legacy v2), token, reply (an automatic answer), smpp (the SMPP server)',
    }),
    routeId: Type.Integer(),
    connector: Type.String({ description: 'The carrier connection that carries it (the route leg chosen at accept)' }),
    channel: Type.Union([Type.Literal('SMS'), Type.Literal('RCS')]),
    receiver: Type.String(),
    status: Type.String({ description: 'docs/statuses.md' }),
    statusDetails: Nullable(Type.String()),
    attempts: Type.Integer({ description: 'Submits to the carrier so far' }),
    carrierId: Nullable(Type.String({ description: "The carrier's id of the message, once submitted" })),
    createdAt: Type.String({ format: 'date-time' }),
    statusAt: Type.String({ format: 'date-time' }),
  }),
);
const Accepted = component('InboundAccepted', Type.Object({ accepted: Type.Boolean() }));
const Callbacks = component(
  'LegacyCallbacks',
  Type.Object({
    replyUrl: Nullable(Type.String({ description: 'Where replies are POSTed in the Legacy v2 format; null: off' })),
    statusUrl: Nullable(Type.String({ description: 'Where status changes are POSTed in the Legacy v2 format; null: off' })),
  }),
);
const S = Nullable(Type.String());
const CallbackDeliveries = component(
  'CallbackDeliveries',
  Type.Object({
    records: Type.Array(
      Type.Object({
        id: Type.String(),
        eventType: Type.String(),
        status: Type.String({ description: 'PENDING, DELIVERING, DELIVERED or FAILED' }),
        attempts: Type.Integer(),
        lastHttpStatus: Nullable(Type.Integer()),
        lastError: S,
        createdAt: Type.String(),
        lastAttemptAt: S,
        nextAttemptAt: S,
        deliveredAt: S,
        url: Type.String(),
      }),
    ),
    total: Type.Integer({ description: 'Deliveries over all pages' }),
  }),
);
const Keywords = component(
  'OptOutKeywords',
  Type.Object({
    keywords: Type.Array(Type.String(), { description: 'A reply that is one of these words (ignoring case, accents, punctuation) blocks its sender' }),
  }),
);

const PerSecondSetting = Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Literal('off'), Type.Literal('default')], {
  description:
    "Requests a second; 'off' = no limit; 'default' = the interface's default (RATE_LIMIT_PER_SECOND on the gateway, 20 a second with bursts of 100 on the legacy interface)",
});
const RateLimit = component(
  'AccountRateLimit',
  Type.Object({
    accountId: Type.Integer(),
    perSecond: PerSecondSetting,
    gatewayPerSecond: Nullable(Type.Integer({ description: 'What the Gateway interface applies to the account now; null: no limit' })),
  }),
);

type OperatorErrorStatus = 400 | 404 | 409 | 413 | 415;
type ErrorDoc = true | string | { description: string; message: string };

const DEFAULTS: Record<OperatorErrorStatus, { description: string; message: string }> = {
  400: { description: 'Invalid request: every problem is named in `error`.', message: 'id: must be integer' },
  404: { description: 'The account (or the record named) does not exist.', message: 'Account 42 was not found.' },
  409: { description: 'A record with the same name already exists.', message: 'A contact group named "Clientes" already exists.' },
  413: { description: 'The body is over the size limit (`BODY_LIMIT_BYTES`, 1 MiB by default).', message: 'The body is too large.' },
  415: { description: 'The `Content-Type` is not `application/json`.', message: 'Unsupported Content-Type; send application/json.' },
};

/** What every operator operation may answer: a wrong token, or a database that cannot work now. */
export const OPERATOR_COMMON: Record<string, ResponseDoc> = {
  401: plainError(
    'No operator token, or a wrong one: `Authorization: Bearer <GATEWAY_ADMIN_TOKEN>`.',
    'Operator token required: Authorization: Bearer <GATEWAY_ADMIN_TOKEN>.',
  ),
  503: plainError(
    'The database cannot store or read right now (disk full, unavailable): nothing was done. Retry after `Retry-After` seconds.',
    'The database cannot store anything right now (disk full or unavailable); nothing was done. Retry later.',
    RETRY_AFTER,
  ),
};

export interface OperatorOperationDoc {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  /** The answer when it works; `schema` absent: the route's own `response` schema; no `example`: no body (204). */
  success: { status: number; description: string; schema?: { $ref: string }; example?: unknown };
  errors: Partial<Record<OperatorErrorStatus, ErrorDoc>>;
  requestExample?: unknown;
}

/** The documentation fields of an operator route schema (spread into `schema`). */
export function operatorDoc(doc: OperatorOperationDoc): DocumentedSchema {
  const s = doc.success;
  const responses: Record<string, ResponseDoc> = {
    [String(s.status)]: {
      description: s.description,
      ...(s.example === undefined ? {} : { content: json({ ...(s.schema ? { schema: s.schema } : {}), example: s.example }) }),
    },
  };
  for (const status of Object.keys(doc.errors).map(Number) as OperatorErrorStatus[]) {
    const e = doc.errors[status];
    if (e === undefined) continue;
    const base = DEFAULTS[status];
    responses[String(status)] = plainError(
      e === true ? base.description : typeof e === 'string' ? e : e.description,
      typeof e === 'object' ? e.message : base.message,
    );
  }
  Object.assign(responses, OPERATOR_COMMON);
  return operation(
    { operationId: doc.operationId, summary: doc.summary, description: doc.description, tags: doc.tags, security: security.operator },
    responses,
    doc.requestExample,
  );
}

const ACCOUNTS = ['Operator: accounts'];
const ROUTES = ['Operator: routes'];
const CARRIERS = ['Operator: carriers'];
const EVENTS = ['Operator: events'];
const BODY = { 413: true, 415: true } as const;
const NO_ACCOUNT = { description: 'No account with this id.', message: 'Account 42 was not found.' };
const BAD_ID = { description: 'The id is not a positive integer.', message: 'id: must be integer' };
const ACCOUNT_EXAMPLE = { id: 42, name: 'Acme Ltda', role: 'CUSTOMER', timezone: 'America/Sao_Paulo', balance: 500, active: true };
const ROUTE_EXAMPLE = {
  id: 2,
  displayName: 'Claro SMS',
  farePrice: 0.065,
  productName: 'SMS',
  productId: 1,
  replyFarePrice: 0.01,
  channel: 'SMS',
  connector: 'claro',
  fallbackRouteId: null,
};

const NO_ROUTE = { description: 'No route with this id.', message: 'Route 2 was not found.' };
const LEGS_EXAMPLE = {
  routeId: 2,
  legs: [
    { connector: 'claro', prefixes: ['5511', '55219'], priority: 1, weight: 1 },
    { connector: 'tim', prefixes: [], priority: 2, weight: 3 },
    { connector: 'claro', prefixes: [], priority: 2, weight: 1 },
  ],
};

/** The operator API's operations in src/http/admin/plugin.ts. */
export const OPERATOR_DOCS = {
  createAccount: operatorDoc({
    operationId: 'createAccount',
    tags: ACCOUNTS,
    summary: 'Create an account',
    description: `A CUSTOMER (default) or RESELLER account with an opening balance (default 0; a ledger entry) and a time zone
(default \`DEFAULT_TIMEZONE\`, America/Sao_Paulo). Issue its API key next with POST /admin/accounts/{id}/api-keys and grant
it a route with POST /admin/accounts/{id}/routes.`,
    success: { status: 201, description: 'Created: the account.', schema: Account, example: ACCOUNT_EXAMPLE },
    errors: {
      ...BODY,
      400: {
        description: 'The name is missing, the time zone unknown, or the balance negative or with more than 6 decimals.',
        message: 'timezone: "Brasilia" is not an IANA time zone (e.g. America/Sao_Paulo)',
      },
    },
    requestExample: { name: 'Acme Ltda', role: 'CUSTOMER', timezone: 'America/Sao_Paulo', balance: '500.00' },
  }),
  getAccount: operatorDoc({
    operationId: 'getAccount',
    tags: ACCOUNTS,
    summary: 'An account',
    description: 'The account with its role, time zone, balance and whether it is active.',
    success: { status: 200, description: 'The account.', schema: Account, example: { ...ACCOUNT_EXAMPLE, balance: 487.35 } },
    errors: { 400: BAD_ID, 404: NO_ACCOUNT },
  }),
  issueKey: operatorDoc({
    operationId: 'issueApiKey',
    tags: ACCOUNTS,
    summary: 'Issue an API key for an account',
    description: `A new API key of the account, for both \`x-api-key\` (Gateway) and \`auth-key\` (Legacy v2). The key is shown only in
this answer. \`allowedIps\` (addresses or CIDR ranges) restricts where it may be used from; absent or empty: anywhere.`,
    success: { status: 201, description: 'Issued: the key and its id.', schema: IssuedKey, example: { id: 318, key: 'b5950ecf-9e54-40e4-80da-ce552c8cc741' } },
    errors: {
      ...BODY,
      400: { description: 'An entry of `allowedIps` is not an address or CIDR range.', message: 'allowedIps: "10.0.0.300" is not an IP address or CIDR range' },
      404: NO_ACCOUNT,
    },
    requestExample: { allowedIps: ['203.0.113.10', '198.51.100.0/24'] },
  }),
  revokeKey: operatorDoc({
    operationId: 'revokeApiKey',
    tags: ACCOUNTS,
    summary: 'Revoke an API key',
    description: 'The key is refused (401) at once in this process, within a second in other gateway processes on the same database.',
    success: { status: 204, description: 'Revoked; no body.' },
    errors: { 400: BAD_ID, 404: { description: 'No live key with this id (unknown, or already revoked).', message: 'API key 318 was not found.' } },
  }),
  addCredits: operatorDoc({
    operationId: 'addCredits',
    tags: ACCOUNTS,
    summary: 'Add credits to an account (or take them back)',
    description: `Adds \`amount\` (negative: takes it back) to the account's balance with a ledger entry whose reason is \`reason\`
(default "operator credit"). At most 6 decimals; the balance may not go below zero.`,
    success: { status: 200, description: 'Done: the new balance.', schema: Balance, example: { balance: 600 } },
    errors: {
      ...BODY,
      400: {
        description: 'The amount has more than 6 decimals, or would take the balance below zero.',
        message: 'amount: -700 would take the balance (500) below zero',
      },
      404: NO_ACCOUNT,
    },
    requestExample: { amount: 100, reason: 'Pix 2026-11-22' },
  }),
  createRoute: operatorDoc({
    operationId: 'createRoute',
    tags: ROUTES,
    summary: 'Create a route',
    description: `A route: what accounts see (display name, product, prices) and the carrier connection (\`connector\`: \`simulator\`
or a connection of the carriers file) that carries its channel. An RCS route may name an SMS \`fallbackRouteId\` for phones
without RCS. Grant it to accounts with POST /admin/accounts/{id}/routes.`,
    success: { status: 201, description: 'Created: the route.', schema: Route, example: ROUTE_EXAMPLE },
    errors: {
      ...BODY,
      400: {
        description: 'A field is invalid, the connector is unknown or does not carry the channel, a price is negative, or the fallback is not an SMS route.',
        message: 'connector: no carrier connection named "vivo"; configured: simulator, claro',
      },
    },
    requestExample: { displayName: 'Claro SMS', productName: 'SMS', productId: 1, farePrice: 0.065, replyFarePrice: 0.01, channel: 'SMS', connector: 'claro' },
  }),
  setRouteFallback: operatorDoc({
    operationId: 'setRouteFallback',
    tags: ROUTES,
    summary: "Set or clear an RCS route's SMS fallback",
    description: 'Phones without RCS get the message as SMS text through `fallbackRouteId` (an SMS route), at its price; null clears it.',
    success: {
      status: 200,
      description: 'Done: the route.',
      schema: Route,
      example: {
        ...ROUTE_EXAMPLE,
        id: 3,
        displayName: 'RCS',
        productName: 'RCS',
        productId: 2,
        farePrice: 0.08,
        replyFarePrice: 0,
        channel: 'RCS',
        connector: 'simulator',
        fallbackRouteId: 2,
      },
    },
    errors: {
      ...BODY,
      400: {
        description: 'The body is invalid, or the fallback is not an SMS route.',
        message: 'fallbackRouteId: must be a route id (a positive integer) or null',
      },
      404: { description: 'No route with this id.', message: 'Route 3 was not found.' },
    },
    requestExample: { fallbackRouteId: 2 },
  }),
  getRouteLegs: operatorDoc({
    operationId: 'getRouteLegs',
    tags: ROUTES,
    summary: "A route's legs",
    description: `The carrier connections that carry the route's messages, in order (docs/carriers.md, "Routing legs"). Empty: the
route's \`connector\` carries every message.`,
    success: { status: 200, description: "The route's legs.", schema: RouteLegs, example: LEGS_EXAMPLE },
    errors: { 400: BAD_ID, 404: NO_ROUTE },
  }),
  setRouteLegs: operatorDoc({
    operationId: 'setRouteLegs',
    tags: ROUTES,
    summary: "Replace a route's legs",
    description: `Replaces the whole ordered list. For each message, the legs whose \`prefixes\` match the receiver (none: any receiver) are
candidates; the lowest \`priority\` among them carries it, and \`weight\` splits the receivers among candidates of that priority. No
matching leg: the route's \`connector\` carries it. \`priority\` defaults to the leg's place in the list (1, 2, ...), \`weight\` to 1.
An empty list removes the legs. Sends of this process use the new legs at once, other gateway processes within a second.`,
    success: { status: 200, description: 'Done: the legs.', schema: RouteLegs, example: LEGS_EXAMPLE },
    errors: {
      ...BODY,
      400: {
        description: "A connector is unknown or does not carry the route's channel, a prefix is not digits, or a weight is below 1.",
        message: 'legs[1].connector: no carrier connection named "vivo"; configured: simulator, claro, tim',
      },
      404: NO_ROUTE,
    },
    requestExample: {
      legs: [
        { connector: 'claro', prefixes: ['5511', '55219'] },
        { connector: 'tim', weight: 3, priority: 2 },
        { connector: 'claro', priority: 2 },
      ],
    },
  }),
  getMessage: operatorDoc({
    operationId: 'getOperatorMessage',
    tags: CARRIERS,
    summary: 'A message: status and the connection that carries it',
    description: "Any account's message by id: its status, attempts and the carrier connection (route leg) chosen at accept.",
    success: {
      status: 200,
      description: 'The message.',
      schema: OperatorMessage,
      example: {
        id: '019ac0e1-4b2a-7c3d-8e9f-0a1b2c3d4e5f',
        accountId: 42,
        requestId: '019ac0e1-4b29-7000-8000-0a1b2c3d4e5f',
        source: 'smpp',
        routeId: 2,
        connector: 'tim',
        channel: 'SMS',
        receiver: '5511999998888',
        status: 'DELIVERED',
        statusDetails: 'stat:DELIVRD err:000',
        attempts: 1,
        carrierId: '7f3a9c',
        createdAt: '2026-11-26T13:15:00.000Z',
        statusAt: '2026-11-26T13:15:02.000Z',
      },
    },
    errors: {
      400: { description: 'The id is too long.', message: 'id: must NOT have more than 64 characters' },
      404: { description: 'No message with this id.', message: 'Message 019ac0e1-4b2a-7c3d-8e9f-0a1b2c3d4e5f was not found.' },
    },
  }),
  grantRoute: operatorDoc({
    operationId: 'grantRoute',
    tags: ACCOUNTS,
    summary: 'Grant a route to an account',
    description: 'The account may send through the route from now on (GET /routes lists it). Granting it again changes nothing.',
    success: { status: 204, description: 'Granted; no body.' },
    errors: { ...BODY, 400: BAD_ID, 404: { description: 'No account, or no route, with this id.', message: 'Route 9 was not found.' } },
    requestExample: { routeId: 2 },
  }),
  createContactGroup: operatorDoc({
    operationId: 'createContactGroup',
    tags: ACCOUNTS,
    summary: 'Create a contact group of an account with its numbers',
    description: `A contact group of the account with up to 100,000 numbers (international form, e.g. 5511999998888; the body may be up
to 10 times the usual limit). Numbers that are not valid phones are listed in \`invalid\` and not stored; duplicates are
stored once. Sends name the group by its id (\`contactGroups\`), Legacy v2 by its name.`,
    success: {
      status: 201,
      description: 'Created: its id, the numbers stored and those refused.',
      schema: CreatedGroup,
      example: { id: 7, added: 2, invalid: ['123'] },
    },
    errors: {
      ...BODY,
      400: { description: 'A field is missing or invalid.', message: 'name: must not be empty' },
      404: NO_ACCOUNT,
      409: { description: 'The account already has a group with this name.', message: 'A contact group named "Clientes" already exists.' },
      413: 'The body is over 10 times the size limit (`BODY_LIMIT_BYTES`, 1 MiB by default).',
    },
    requestExample: { name: 'Clientes', description: 'Clientes ativos', numbers: ['5511999998888', '5521988887777'] },
  }),
  carriers: operatorDoc({
    operationId: 'listCarriers',
    tags: CARRIERS,
    summary: 'Carrier connections: channels, bind state, free window, messages waiting',
    description: `Each carrier connection as the dispatcher sees it: the channels it carries, whether it takes messages now, how many it
can take, the messages waiting for it in the outbox (of every gateway process sharing the database), and \`submitted\`: the submits this
process made on it since it started, by the carrier's answer (accepted, to retry, failed); the difference between two reads divided by
the time between them is a submit rate.`,
    success: {
      status: 200,
      description: 'The connections.',
      schema: Carriers,
      example: [
        {
          name: 'simulator',
          channels: ['SMS', 'RCS'],
          ready: true,
          capacity: 1000,
          queued: 0,
          sending: 0,
          scheduled: 3,
          submitted: { accepted: 1520, retry: 0, failed: 2 },
        },
        {
          name: 'claro',
          channels: ['SMS'],
          ready: true,
          capacity: 48,
          queued: 120,
          sending: 2,
          scheduled: 0,
          submitted: { accepted: 98411, retry: 37, failed: 5 },
        },
      ],
    },
    errors: {},
  }),
  cluster: operatorDoc({
    operationId: 'getCluster',
    tags: CARRIERS,
    summary: 'Gateway processes sharing the database, and the outbox per connection',
    description: `The gateway processes alive on this database (GATEWAY_ROLE \`all\`, \`api\` or \`dispatch\`): host, process id, when they
started and were last seen, and the carrier connections each runs; and the messages waiting in the outbox per connection. A process
is alive while it was seen within two dispatch leases (\`DISPATCH_LEASE_MS\`) and, on the same machine, while its process runs.`,
    success: {
      status: 200,
      description: 'The processes and the outbox.',
      schema: Cluster,
      example: {
        processes: [
          {
            id: '0b6f6b1e-8a0c-4a43-9a5e-3f1c2d4e5f60',
            role: 'api',
            host: 'gw-1',
            pid: 4121,
            startedAt: '2026-11-26T09:00:00.000Z',
            lastSeenAt: '2026-11-26T09:41:15.000Z',
            connectors: [],
            self: true,
          },
          {
            id: '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
            role: 'dispatch',
            host: 'gw-1',
            pid: 4122,
            startedAt: '2026-11-26T09:00:01.000Z',
            lastSeenAt: '2026-11-26T09:41:12.000Z',
            connectors: ['simulator', 'claro'],
            self: false,
          },
        ],
        outbox: [
          { connector: 'claro', queued: 120, scheduled: 0, sending: 2 },
          { connector: 'simulator', queued: 0, scheduled: 3, sending: 0 },
        ],
      },
    },
    errors: {},
  }),
  simulatorInbound: operatorDoc({
    operationId: 'simulateInbound',
    tags: CARRIERS,
    summary: 'Make the simulator carrier receive a text from a phone',
    description: `The built-in simulator delivers a text from \`from\` as a phone's reply would arrive: it is matched to the latest message
sent to that phone and shows in the reports, webhooks and callbacks. For trying things out.`,
    success: { status: 202, description: 'Taken by the simulator.', schema: Accepted, example: { accepted: true } },
    errors: { ...BODY, 400: { description: '`from` is not a phone number, or `text` is missing.', message: 'from: must match pattern "^\\+?\\d{8,15}$"' } },
    requestExample: { from: '5511999998888', text: 'SIM' },
  }),
  setCallbacks: operatorDoc({
    operationId: 'setLegacyCallbacks',
    tags: EVENTS,
    summary: "Set an account's Legacy v2 callback URLs",
    description: `Replies (\`replyUrl\`) and status changes (\`statusUrl\`) of the account are POSTed there in the Legacy v2 format
(docs/webhooks.md). Absent or null turns one off. URLs must be http(s) on a public address.`,
    success: { status: 200, description: 'Set: both URLs.', schema: Callbacks, example: { replyUrl: 'https://erp.example.com/sms/reply', statusUrl: null } },
    errors: {
      ...BODY,
      400: {
        description: 'A URL is not http(s) on a public address, or the body has another field.',
        message: 'replyUrl: 10.0.0.5 is a private address; only public addresses may be called',
      },
      404: NO_ACCOUNT,
    },
    requestExample: { replyUrl: 'https://erp.example.com/sms/reply', statusUrl: 'https://erp.example.com/sms/status' },
  }),
  getCallbacks: operatorDoc({
    operationId: 'getLegacyCallbacks',
    tags: EVENTS,
    summary: "An account's Legacy v2 callback URLs",
    description: 'The URLs replies and status changes are POSTed to in the Legacy v2 format; null: off.',
    success: {
      status: 200,
      description: 'Both URLs.',
      schema: Callbacks,
      example: { replyUrl: 'https://erp.example.com/sms/reply', statusUrl: 'https://erp.example.com/sms/status' },
    },
    errors: { 400: BAD_ID, 404: NO_ACCOUNT },
  }),
  callbackDeliveries: operatorDoc({
    operationId: 'listLegacyCallbackDeliveries',
    tags: EVENTS,
    summary: "Delivery log of an account's Legacy v2 callbacks, newest first",
    description: 'Every callback sent (or to be sent), newest first, with its URL, attempts and outcome. `skip`/`limit` page them (at most 1,000).',
    success: {
      status: 200,
      description: 'The page of deliveries and their total.',
      schema: CallbackDeliveries,
      example: {
        records: [
          {
            id: '01a204da-7a1c-7c3e-9b11-5a0c2f9e7d41',
            eventType: 'message.reply',
            status: 'DELIVERED',
            attempts: 1,
            lastHttpStatus: 200,
            lastError: null,
            createdAt: '2026-11-22T20:05:12.004Z',
            lastAttemptAt: '2026-11-22T20:05:12.311Z',
            nextAttemptAt: null,
            deliveredAt: '2026-11-22T20:05:12.311Z',
            url: 'https://erp.example.com/sms/reply',
          },
        ],
        total: 1,
      },
    },
    errors: { 400: { description: 'The id or a paging parameter is invalid.', message: 'limit: must be <= 1000' }, 404: NO_ACCOUNT },
  }),
  setOptOutKeywords: operatorDoc({
    operationId: 'setOptOutKeywords',
    tags: EVENTS,
    summary: "Set an account's opt-out keywords",
    description: `Replaces the account's keywords (at most 50): a reply that is one of them, ignoring case, accents, spaces and
punctuation, puts its sender on the account's blocklist. An empty list turns opt-out by keyword off; the default is SAIR,
PARAR, CANCELAR, STOP.`,
    success: { status: 200, description: 'Set: the keywords kept (duplicates once).', schema: Keywords, example: { keywords: ['SAIR', 'PARAR', 'STOP'] } },
    errors: {
      ...BODY,
      400: { description: 'A keyword has no letter or digit, or the list is too long.', message: 'keywords[1]: must contain a letter or digit' },
      404: NO_ACCOUNT,
    },
    requestExample: { keywords: ['SAIR', 'PARAR', 'STOP'] },
  }),
  getOptOutKeywords: operatorDoc({
    operationId: 'getOptOutKeywords',
    tags: EVENTS,
    summary: "An account's opt-out keywords",
    description: 'The words that, as a whole reply, put the sender on the blocklist; the defaults when never set.',
    success: { status: 200, description: 'The keywords.', schema: Keywords, example: { keywords: ['SAIR', 'PARAR', 'CANCELAR', 'STOP'] } },
    errors: { 400: BAD_ID, 404: NO_ACCOUNT },
  }),
  getRateLimit: operatorDoc({
    operationId: 'getAccountRateLimit',
    tags: ACCOUNTS,
    summary: "An account's rate limit",
    description: `The account's request limit on the Gateway and Legacy v2 interfaces (docs/operations.md, "Rate limits"): its own
setting, or \`default\` when the operator never set one, and what the Gateway interface applies now.`,
    success: { status: 200, description: 'The setting.', schema: RateLimit, example: { accountId: 42, perSecond: 'default', gatewayPerSecond: null } },
    errors: { 400: BAD_ID, 404: NO_ACCOUNT },
  }),
  setRateLimit: operatorDoc({
    operationId: 'setAccountRateLimit',
    tags: ACCOUNTS,
    summary: "Set an account's rate limit",
    description: `Sets the account's request limit on the Gateway and Legacy v2 interfaces: \`perSecond\` requests a second (counted
per window of RATE_LIMIT_WINDOW_SECONDS, so a burst may use a whole window's allowance at once), \`off\` for no limit, or
\`default\` for the interface's default. Requests over it are answered 429 with \`Retry-After\`. It applies at once on
this process and within 5 seconds on the others.`,
    success: { status: 200, description: 'Set: the setting.', schema: RateLimit, example: { accountId: 42, perSecond: 50, gatewayPerSecond: 50 } },
    errors: {
      ...BODY,
      400: {
        description: '`perSecond` is not a positive whole number, `off` or `default`.',
        message: 'body/perSecond: must be a whole number from 1 to 1000000, "off" or "default"',
      },
      404: NO_ACCOUNT,
    },
    requestExample: { perSecond: 50 },
  }),
};

/** The documentation of a route that carries its own summary and description (src/http/admin/listing.ts): the rest. */
type Extras = Omit<DocumentedSchema, 'summary' | 'description'>;
function extras(doc: Omit<OperatorOperationDoc, 'summary' | 'description'>): Extras {
  const { summary: _summary, description: _description, ...rest } = operatorDoc({ ...doc, summary: '', description: '' });
  return rest;
}

const LISTED_ACCOUNT = { ...ACCOUNT_EXAMPLE, balance: 487.35, parentId: null, createdAt: '2026-11-02T13:15:00.000Z', deactivatedAt: null };
const BAD_QUERY = {
  description: 'The id or a query parameter is invalid, or the query has a parameter the list does not take.',
  message: 'limit: must be a whole number from 1 to 1000',
};

/** The operator API's lists and account (de)activation (src/http/admin/listing.ts). */
export const LISTING_DOCS = {
  listAccounts: extras({
    operationId: 'listAccounts',
    tags: ACCOUNTS,
    success: { status: 200, description: 'The page of accounts and the count of every match.', example: { records: [LISTED_ACCOUNT], total: 1 } },
    errors: { 400: { ...BAD_QUERY, message: 'stauts: is not a parameter of this list (skip, limit, name, status, order)' } },
  }),
  listKeys: extras({
    operationId: 'listApiKeys',
    tags: ACCOUNTS,
    success: {
      status: 200,
      description: "The page of the account's keys and their count.",
      example: { records: [{ id: 318, hint: 'c741', createdAt: '2026-11-02T13:16:40.000Z', revokedAt: null, allowedIps: ['203.0.113.10'] }], total: 1 },
    },
    errors: { 400: BAD_QUERY, 404: NO_ACCOUNT },
  }),
  listRoutes: extras({
    operationId: 'listOperatorRoutes',
    tags: ROUTES,
    success: { status: 200, description: 'The page of routes and their count.', example: { records: [ROUTE_EXAMPLE], total: 1 } },
    errors: { 400: BAD_QUERY },
  }),
  listAccountRoutes: extras({
    operationId: 'listAccountRoutes',
    tags: ACCOUNTS,
    success: { status: 200, description: 'The page of routes granted to the account and their count.', example: { records: [ROUTE_EXAMPLE], total: 1 } },
    errors: { 400: BAD_QUERY, 404: NO_ACCOUNT },
  }),
  deactivate: extras({
    operationId: 'deactivateAccount',
    tags: ACCOUNTS,
    success: { status: 200, description: 'Deactivated (or already was): the account.', example: { ...ACCOUNT_EXAMPLE, active: false } },
    errors: { 400: BAD_ID, 404: NO_ACCOUNT },
  }),
  activate: extras({
    operationId: 'activateAccount',
    tags: ACCOUNTS,
    success: { status: 200, description: 'Active (again): the account.', example: ACCOUNT_EXAMPLE },
    errors: { 400: BAD_ID, 404: NO_ACCOUNT },
  }),
};
