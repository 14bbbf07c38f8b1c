import { normalizeBrazilian } from '../common/phone.ts';
import { toMicros } from '../billing/money.ts';
import { normalizeDocument } from './documents.ts';

/** Shortest accepted password of an owner credential (in characters). */
export const MIN_PASSWORD_LENGTH = 8;

/**
 * The body of POST /child-users as far as its types are right.
 * A field the edge already refused for its type is left out (undefined), so
 * each problem is reported once.
 */
export interface ChildUserInput {
  fullName?: string | undefined;
  email?: string | undefined;
  phoneNumber?: string | undefined;
  document?: string | undefined;
  limit?: number | undefined;
  ownerCredentialFullName?: string | undefined;
  ownerCredentialEmail?: string | undefined;
  ownerCredentialPhoneNumber?: string | undefined;
  password?: string | undefined;
}

export const CHILD_USER_FIELDS = [
  'fullName',
  'email',
  'phoneNumber',
  'document',
  'limit',
  'ownerCredentialFullName',
  'ownerCredentialEmail',
  'ownerCredentialPhoneNumber',
  'password',
] as const satisfies readonly (keyof ChildUserInput)[];

/** A checked and normalised child user, ready to store. */
export interface NewChildUser {
  fullName: string;
  email: string;
  /** 55 + area code + number. */
  phoneNumber: string;
  /** Digits only. */
  document: string;
  /** Credit allotment in micro-units. */
  limit: number;
  ownerCredentialFullName: string;
  ownerCredentialEmail: string;
  ownerCredentialPhoneNumber: string;
  password: string;
}

// RFC 5321/5322 "dot-atom" local part and a host name with at least one dot:
// what mail providers accept, without quoted local parts or IP literals.
const LOCAL = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const EMAIL = new RegExp(`^${LOCAL}@${LABEL}(?:\\.${LABEL})+$`);

export function emailProblem(value: string): string | null {
  const email = value.trim();
  if (email.length === 0) return 'is required';
  if (email.length > 254) return 'must be at most 254 characters';
  const at = email.lastIndexOf('@');
  if (!EMAIL.test(email) || at > 64) return `${JSON.stringify(email)} is not an e-mail address`;
  return null;
}

/** The key e-mail uniqueness is judged by: case-insensitive. */
export const emailKey = (email: string) => email.trim().toLowerCase();

/**
 * Checks every field and normalises phone numbers (normalizeBrazilian) and
 * the document (digits only, check digits verified). Returns one problem
 * per bad field, `field: reason`.
 */
export function checkChildUser(input: ChildUserInput): { problems: string[]; value: NewChildUser | null } {
  const problems: string[] = [];
  const text = (field: string, value: string | undefined): string => {
    if (value === undefined) return '';
    const trimmed = value.trim();
    if (!trimmed) problems.push(`${field}: must not be blank`);
    return trimmed;
  };
  const email = (field: string, value: string | undefined): string => {
    if (value === undefined) return '';
    const problem = emailProblem(value);
    if (problem) problems.push(`${field}: ${problem}`);
    return value.trim();
  };
  const phone = (field: string, value: string | undefined): string => {
    if (value === undefined) return '';
    const normalised = normalizeBrazilian(value);
    if (!normalised) problems.push(`${field}: ${JSON.stringify(value)} is not a valid Brazilian phone number (area code + number, e.g. 11999998888)`);
    return normalised ?? '';
  };

  const fullName = text('fullName', input.fullName);
  const ownerCredentialFullName = text('ownerCredentialFullName', input.ownerCredentialFullName);
  const mail = email('email', input.email);
  const ownerCredentialEmail = email('ownerCredentialEmail', input.ownerCredentialEmail);
  const phoneNumber = phone('phoneNumber', input.phoneNumber);
  const ownerCredentialPhoneNumber = phone('ownerCredentialPhoneNumber', input.ownerCredentialPhoneNumber);

  let document = '';
  if (input.document !== undefined) {
    const checked = normalizeDocument(input.document);
    if ('error' in checked) problems.push(`document: ${checked.error}`);
    else document = checked.document;
  }

  let limit = 0;
  if (input.limit !== undefined) {
    const micros = input.limit >= 0 ? toMicros(input.limit) : null;
    if (micros === null) problems.push('limit: must be a non-negative whole number of credits');
    else limit = micros;
  }

  if (input.password !== undefined && [...input.password].length < MIN_PASSWORD_LENGTH) {
    problems.push(`password: must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }

  const complete = CHILD_USER_FIELDS.every((field) => input[field] !== undefined);
  if (problems.length || !complete || input.password === undefined) return { problems, value: null };
  return {
    problems,
    value: {
      fullName,
      email: mail,
      phoneNumber,
      document,
      limit,
      ownerCredentialFullName,
      ownerCredentialEmail,
      ownerCredentialPhoneNumber,
      password: input.password,
    },
  };
}
