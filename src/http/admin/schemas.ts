import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** Schemas the operator API's routes (listing.ts) and its document (docs.ts) share. */

/** A value or null, written the OpenAPI 3.0 way (`nullable`), which the answer serializer understands too. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });

/** A route as the operator API answers it. */
export const RouteSchema = Type.Object({
  id: Type.Integer(),
  displayName: Type.String(),
  farePrice: Type.Number({ description: 'Price of an SMS part or an RCS send' }),
  productName: Type.String(),
  productId: Type.Integer(),
  replyFarePrice: Type.Number({ description: 'Price of a reply received' }),
  channel: Type.Union([Type.Literal('SMS'), Type.Literal('RCS')]),
  connector: Type.String({ description: 'Carrier connection' }),
  fallbackRouteId: Nullable(Type.Integer({ description: "An RCS route's SMS route for phones without RCS" })),
});
