import { Type } from '@sinclair/typebox';
import { MAX_TEXT_CHARACTERS } from '../../common/text.ts';

/** Shared schema pieces of the legacy routes (they feed the OpenAPI document). */
export const AuthKeyHeader = Type.Object({ 'auth-key': Type.Optional(Type.String({ description: 'API key of the account (a UUID)' })) });

/** Longest SMS text accepted (about 13 concatenated parts), as on the gateway. */
export const MAX_TEXT = MAX_TEXT_CHARACTERS;

export const Text = (description: string) => Type.String({ maxLength: MAX_TEXT, description });
export const Name = (description: string) => Type.String({ maxLength: 200, description });
export const Sender = Type.String({ maxLength: 100, description: 'Internal identifier, shown in the reports' });

export const Receivers = Type.Union(
  [Type.String({ maxLength: 20_000 }), Type.Array(Type.Union([Type.String({ maxLength: 40 }), Type.Number()]), { maxItems: 1000 })],
  {
    description:
      'Comma-separated phones, each area code + number (spaces, a leading +, a leading 55 and brackets are tolerated); at most 100 after de-duplication',
  },
);

export const ScheduleDate = Type.String({
  maxLength: 40,
  description: 'YYYY-MM-DD HH:mm:ss (or DD/MM/YYYY HH:mm:ss) in the account time zone, or ISO 8601 with an offset; must be in the future',
});

export const Phone = Type.Union([Type.String({ maxLength: 40 }), Type.Number()], { description: 'Area code + number, e.g. 11999998888' });

/** An id is accepted in the path (`/credits/{id}`) and in the query (`?id=`). */
export const IdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });
export const IdQuery = Type.Object({ id: Type.Optional(Type.String({ maxLength: 200 })) });

export const DateRange = {
  StartDate: Type.Optional(Type.String({ maxLength: 40, description: 'YYYY-MM-DD or DD/MM/YYYY (account time zone), or ISO 8601' })),
  EndDate: Type.Optional(Type.String({ maxLength: 40, description: 'YYYY-MM-DD or DD/MM/YYYY, inclusive (account time zone), or ISO 8601' })),
  // Bounded so the database gets an integer it can take (an offset beyond 2^53 was a 500); out of range is a 400 naming the range.
  Skip: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'Records to skip, 0 to 9007199254740991' })),
  Limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 10_000, description: 'Records to return, 1 to 10000' })),
};

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** The id of an operation: from the path (`/credits/{id}`) or the query (`?id=`), path first. */
export function idFrom(request: { params: unknown; query: unknown }): string | undefined {
  for (const source of [request.params, request.query]) {
    if (typeof source === 'object' && source !== null && 'id' in source) {
      const value = source.id;
      if ((typeof value === 'string' || typeof value === 'number') && String(value).trim() !== '') return String(value).trim();
    }
  }
  return undefined;
}
