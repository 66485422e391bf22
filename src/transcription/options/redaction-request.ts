/**
 * `redact_pii` and `redact_pci` as clients send them: "true" or "false", or a comma-separated list
 * of the kinds to redact ("ssn,email", "card"), as the official Python SDK's streaming helper joins
 * a list. A list turns on the redaction of its family, which removes every kind the family knows:
 * never fewer than were asked for. Each entry must name a kind of that family, so a misspelt one
 * is refused rather than silently leaving the data in the transcript.
 */
import { InvalidRequestError } from '../../errors.js';

export type RedactionField = 'redact_pii' | 'redact_pci';

/** The kinds each field may list, in the spellings clients use (case, '-' and ' ' do not matter). */
const KINDS: Record<RedactionField, readonly string[]> = {
  redact_pii: [
    'email', 'emails', 'email_address',
    'phone', 'phone_number', 'phonenumber', 'telephone', 'mobile',
    'ssn', 'social_security_number', 'national_id', 'nationalid', 'passport', 'tax_id',
    'dob', 'date_of_birth', 'dateofbirth', 'birthdate',
    'address', 'street_address',
    // Names are listed by clients too; redacting them needs a named-entity pack, and the answer says whether names were.
    'name', 'names', 'person', 'firstname', 'first_name', 'lastname', 'last_name',
  ],
  redact_pci: [
    'card', 'card_number', 'credit_card', 'credit_card_number', 'creditcardnumber',
    'cvv', 'cvc', 'creditcardcvv',
    'expiry', 'expiration', 'expiry_date', 'creditcardexpiry',
    'routing', 'routing_number', 'routingnumber',
    'account', 'account_number', 'accountnumber', 'bank_account', 'bank_account_number', 'bankaccountnumber', 'iban',
  ],
};

/** Most entries a list may hold: more than every kind twice over is no request a client makes. */
export const MAX_REDACTION_KINDS = 20;

/** Whether `value` of `field` asks for redaction; a value that is neither a flag nor a list of known kinds throws InvalidRequestError naming the field. */
export function redactionRequested(field: RedactionField, value: string | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  const entries = value.split(',').map((entry) => entry.trim().toLowerCase().replace(/[-\s]+/g, '_'));
  const known = KINDS[field];
  if (entries.length > MAX_REDACTION_KINDS) throw new InvalidRequestError(`${field} may list at most ${MAX_REDACTION_KINDS} kinds`);
  const unknown = entries.find((entry) => !known.includes(entry));
  if (unknown !== undefined) {
    throw new InvalidRequestError(`${field} must be true, false or a comma-separated list of kinds to redact (${known.join(', ')}); "${unknown.slice(0, 50)}" is none of them`);
  }
  return true;
}
