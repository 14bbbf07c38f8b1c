import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { isbot } from 'isbot';
import type { Core } from '../../core.ts';
import { MAX_URL_LENGTH, locationOf } from '../../shortlinks/urls.ts';
import { CODE_PATTERN } from '../../shortlinks/codes.ts';
import {
  MAX_PAGE,
  createLink,
  deleteLink,
  destinationOrThrow,
  followLink,
  listLinks,
  peekLink,
  publicShortLink,
  shortLinkBase,
  updateLink,
} from '../../shortlinks/links.ts';
import { ApiKeyHeader } from './schemas.ts';
import { Limit, Skip } from './paging.ts';
import { Envelope, errorResponses, ok } from './envelope.ts';
import { BODY_ERRORS, gatewayDoc } from './docs.ts';
import { PUBLIC_DOCS } from '../public-docs.ts';

const Destination = Type.String({ maxLength: MAX_URL_LENGTH, description: `http:// or https:// URL with a host, at most ${MAX_URL_LENGTH} characters.` });
const LinkBody = Type.Object({ destinationUrl: Destination }, { required: ['destinationUrl'] });
const LinkId = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const ListQuery = Type.Object({
  skip: Skip(),
  limit: Limit(MAX_PAGE),
  filter: Type.Optional(Type.String({ maxLength: MAX_URL_LENGTH, description: 'Case-insensitive substring of the code or of the destination URL.' })),
});

/** A short link as the API answers it. */
const ShortLink = Type.Object({
  id: Type.Integer(),
  code: Type.String(),
  shortUrl: Type.String(),
  destinationUrl: Type.String(),
  createdAt: Type.String({ description: 'ISO 8601, UTC' }),
  updatedAt: Type.String({ description: 'ISO 8601, UTC' }),
  accessCount: Type.Integer(),
  humanAccessCount: Type.Integer(),
  botAccessCount: Type.Integer(),
});

const tags = ['Short links'];
const LINK = {
  id: 57,
  code: 'oCi29asF',
  shortUrl: 'https://sms.example.com/s/oCi29asF',
  destinationUrl: 'https://example.com/promo?utm_source=sms',
  createdAt: '2026-11-22T20:02:47.521Z',
  updatedAt: '2026-11-22T20:02:47.521Z',
  accessCount: 132,
  humanAccessCount: 120,
  botAccessCount: 12,
};
const NO_LINK = { description: "No short link with this id in the account (deleted, or another account's).", message: 'Short link 57 was not found.' };
const BAD_URL = {
  description: 'The destination is not an http(s) URL with a host, or is too long.',
  message: 'destinationUrl: must be an http:// or https:// URL',
};

/** The account's short links. Ids of other accounts' (or deleted) links are 404. */
export async function shortLinkRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const db = core.db.kysely;
  const base = shortLinkBase(core.config);

  app.post<{ Body: Static<typeof LinkBody> }>(
    '/short-links',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'createShortLink',
          tags,
          summary: 'Create a short link',
          description: `Makes a short link of the account to \`destinationUrl\`: \`shortUrl\` (\`{GATEWAY_PUBLIC_URL}/s/{code}\`) redirects
there and counts each access, as human or bot by the User-Agent. Sends can make them from their URLs with
\`shortenLinks: true\`.`,
          success: {
            description: 'Created: the short link.',
            object: { ...LINK, accessCount: 0, humanAccessCount: 0, botAccessCount: 0 },
            message: 'Short link oCi29asF created.',
          },
          errors: { ...BODY_ERRORS, 400: BAD_URL },
          requestExample: { destinationUrl: 'https://example.com/promo?utm_source=sms' },
        }),
        headers: ApiKeyHeader,
        body: LinkBody,
        response: { 200: Envelope(ShortLink), ...errorResponses },
      },
    },
    async (request) => {
      const row = await createLink(db, request.principal.accountId, destinationOrThrow(request.body.destinationUrl, base));
      return ok(publicShortLink(row, base), `Short link ${row.code} created.`);
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/short-links',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'listShortLinks',
          tags,
          summary: 'Short links of the account, newest first',
          description:
            'The short links of the account with their counters, newest first; `filter` keeps those whose code or destination contains it (ignoring case). `skip`/`limit` page them.',
          success: { description: 'The page of short links; `totalRecords` counts every match.', object: [LINK], totalRecords: 1 },
          errors: { 400: { description: 'A paging parameter or the filter is invalid.', message: 'skip: must be a whole number from 0 to 9007199254740991' } },
        }),
        headers: ApiKeyHeader,
        querystring: ListQuery,
        response: { 200: Envelope(Type.Array(ShortLink)), ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listLinks(db, request.principal.accountId, { skip: q.skip ?? 0, limit: q.limit ?? 100, filter: q.filter });
      return ok(
        page.records.map((r) => publicShortLink(r, base)),
        null,
        page.total,
      );
    },
  );

  app.put<{ Params: Static<typeof LinkId>; Body: Static<typeof LinkBody> }>(
    '/short-links/:id',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'updateShortLink',
          tags,
          summary: 'Change the destination URL of a short link (code and counters stay)',
          description: 'Points the short link to a new destination; its code, short URL and counters stay as they are.',
          success: {
            description: 'Updated: the short link.',
            object: { ...LINK, destinationUrl: 'https://example.com/black-friday', updatedAt: '2026-11-23T09:15:02.114Z' },
            message: 'Short link oCi29asF updated.',
          },
          errors: { ...BODY_ERRORS, 400: BAD_URL, 404: NO_LINK },
          requestExample: { destinationUrl: 'https://example.com/black-friday' },
        }),
        headers: ApiKeyHeader,
        params: LinkId,
        body: LinkBody,
        response: { 200: Envelope(ShortLink), ...errorResponses },
      },
    },
    async (request) => {
      const row = await updateLink(db, request.principal.accountId, request.params.id, destinationOrThrow(request.body.destinationUrl, base));
      return ok(publicShortLink(row, base), `Short link ${row.code} updated.`);
    },
  );

  app.delete<{ Params: Static<typeof LinkId> }>(
    '/short-links/:id',
    {
      schema: {
        ...gatewayDoc({
          operationId: 'deleteShortLink',
          tags,
          summary: 'Delete a short link (its code stops redirecting and is never reused)',
          description: 'Deletes the short link: its URL answers 404 from now on, and its code is never given to another link.',
          success: { description: 'Deleted: the short link as it was.', object: LINK, message: 'Short link oCi29asF deleted.' },
          errors: { 400: { description: 'The id is not a positive integer.', message: 'id: must be >= 1' }, 404: NO_LINK },
        }),
        headers: ApiKeyHeader,
        params: LinkId,
        response: { 200: Envelope(ShortLink), ...errorResponses },
      },
    },
    async (request) => {
      const row = await deleteLink(db, request.principal.accountId, request.params.id);
      return ok(publicShortLink(row, base), `Short link ${row.code} deleted.`);
    },
  );
}

const NOT_FOUND_PAGE = `<!doctype html>
<html lang="pt-BR">
<head><meta charset="utf-8"><meta name="robots" content="noindex"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Link não encontrado / Link not found</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 4rem auto; padding: 0 1rem">
<h1>Link não encontrado</h1>
<p>Este link curto não existe ou foi removido.</p>
<hr>
<h2>Link not found</h2>
<p>This short link does not exist or was removed.</p>
</body>
</html>
`;

/**
 * The public redirect `GET /s/{code}` (docs/child-users-and-short-links.md):
 * no API key. 302 to the destination, counting the access as human or bot
 * by the User-Agent (isbot; no User-Agent counts as a bot). HEAD answers
 * the same without counting (link checkers and previews). Unknown or
 * deleted codes get a 404 HTML page.
 */
export async function shortLinkRedirect(app: FastifyInstance, { core }: { core: Core }) {
  const db = core.db.kysely;

  app.get<{ Params: { code: string } }>(
    '/s/:code',
    {
      schema: {
        ...PUBLIC_DOCS.shortLink,
        params: Type.Object({ code: Type.String({ description: 'The short link code' }) }),
      },
    },
    async (request, reply) => {
      const code = request.params.code;
      const userAgent = request.headers['user-agent'];
      const bot = !userAgent || isbot(userAgent);
      const destination = CODE_PATTERN.test(code) ? await (request.method === 'HEAD' ? peekLink(db, code) : followLink(db, code, bot)) : null;
      if (destination === null) return notFoundPage(reply);
      // no-store: every click reaches us and is counted; no-referrer: the destination does not learn the code.
      return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(locationOf(destination), 302);
    },
  );
  // Deeper paths under /s/ are no short link either (and are not the gateway's, which would ask for an API key).
  app.get('/s/*', { schema: { hide: true } }, async (_request, reply) => notFoundPage(reply));
}

const notFoundPage = (reply: FastifyReply) => reply.status(404).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_FOUND_PAGE);
