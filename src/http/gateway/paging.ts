import { Type } from '@sinclair/typebox';
import { ERROR_TEXT } from '../validation.ts';

/**
 * A whole number in [min, max] whose every problem (not a number, a
 * fraction, out of range) reads as one line naming the range. The bound
 * keeps what reaches the database an integer it can take: an offset
 * beyond 2^53 is not one.
 */
const wholeNumber = (min: number, max: number, byDefault: number, description: string) =>
  Type.Unsafe<number>({
    anyOf: [Type.Integer({ minimum: min, maximum: max })],
    [ERROR_TEXT]: `must be a whole number from ${min} to ${max}`,
    default: byDefault,
    description: `${description} (${min} to ${max}; default ${byDefault})`,
  });

/** `skip` of a list: records to leave out before the page. */
export const Skip = () => Type.Optional(wholeNumber(0, Number.MAX_SAFE_INTEGER, 0, 'Records to skip'));

/** `limit` of a list: records in the page. */
export const Limit = (max: number, byDefault = 100) => Type.Optional(wholeNumber(1, max, byDefault, 'Records to return'));
