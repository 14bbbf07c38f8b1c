import { Type } from '@sinclair/typebox';
import { ERROR_TEXT } from '../validation.ts';
import { OptionalNullable } from '../../common/schema.ts';

/** Integers or digit strings (real clients send both). */
export const PhoneValue = Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^\\+?\\d{8,15}$' })], {
  [ERROR_TEXT]: 'must be a phone number in international form, as an integer or a digit string (e.g. 5511999998888)',
  description: 'Phone number in international form: country code 55 + area code + number, no separators.',
});

export const RouteId = Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^\\d+$' })], {
  [ERROR_TEXT]: 'must be a route id (integer) from GET /routes',
  description: "Route id from GET /routes; when absent, the account's first route of the channel.",
});

// Ids beyond the safe range would overflow PostgreSQL bigint (a 500); they match nothing, so they are refused.
const GroupId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export const ContactGroupRef = Type.Union([GroupId, Type.Object({ id: GroupId }, { required: ['id'] })], {
  [ERROR_TEXT]: 'must be a contact group id (integer) or {"id": n}',
});

/** The common fields of every send; each may be null, which means absent. */
export const CommonSendFields = {
  receivers: OptionalNullable(Type.Array(PhoneValue, { maxItems: 10_000 })),
  contactGroups: OptionalNullable(Type.Array(ContactGroupRef, { maxItems: 100 })),
  route: OptionalNullable(RouteId),
  tag: OptionalNullable(Type.String({ maxLength: 100 })),
  custom: OptionalNullable(Type.String({ maxLength: 1000 })),
  scheduleDate: OptionalNullable(
    Type.String({
      description: 'YYYY-MM-DD HH:mm:ss in the account time zone (default America/Sao_Paulo), or ISO 8601 with an offset. Absent or null: send now.',
    }),
  ),
};

export const ApiKeyHeader = Type.Object({ 'x-api-key': Type.Optional(Type.String({ description: 'API key of the account' })) });

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
