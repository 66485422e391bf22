/**
 * Turn Ajv validation errors into one sentence that names the field and the rule
 * (e.g. "speed must be between 0.5 and 2").
 * Ajv runs with `verbose: true`, so each error carries its parentSchema.
 */
import { Ajv, type Options } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { InvalidRequestError } from '../../errors.js';

/** Ajv settings of every route schema (app.ts) and of WebSocket messages: nothing coerced, one error. */
export const ajvOptions: Options = { coerceTypes: false, removeAdditional: false, allErrors: false, verbose: true, useDefaults: true };

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, any>;
  message?: string;
  parentSchema?: Record<string, any>;
  data?: unknown;
}

function fieldName(e: AjvError, context?: string): string {
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') return path ? `${path}.${e.params.missingProperty}` : e.params.missingProperty;
  return path || (context === 'querystring' ? 'query' : 'body');
}

function range(s: Record<string, any> | undefined): string | null {
  if (!s) return null;
  const min = s.minimum ?? s.exclusiveMinimum;
  const max = s.maximum ?? s.exclusiveMaximum;
  if (min !== undefined && max !== undefined) return `must be between ${min} and ${max}`;
  if (min !== undefined) return `must be at least ${min}`;
  if (max !== undefined) return `must be at most ${max}`;
  return null;
}

/** The field the first validation error is about (`speed`, `voice`...), as validationMessage names it. */
export function validationField(err: { validation?: unknown[]; validationContext?: string }): string {
  return fieldName((err.validation?.[0] ?? {}) as AjvError, err.validationContext);
}

export function validationMessage(err: { validation?: unknown[]; validationContext?: string }): string {
  const e = (err.validation?.[0] ?? {}) as AjvError;
  const field = fieldName(e, err.validationContext);
  const s = e.parentSchema;
  switch (e.keyword) {
    case 'required':
      return `${field} is required`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${field} ${range(s)}`;
    case 'enum':
      return `${field} must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
    case 'type':
      // A query parameter given twice arrives as an array (?language=en&language=fr).
      if (err.validationContext === 'querystring' && Array.isArray(e.data)) return `${field} must be given once`;
      return `${field} must be ${e.params.type === 'integer' ? 'an integer' : `a ${e.params.type}`}`;
    case 'minLength':
      return e.params.limit === 1 ? `${field} must not be empty` : `${field} must be at least ${e.params.limit} characters`;
    case 'maxLength':
      return `${field} must be at most ${e.params.limit} characters`;
    case 'pattern':
      return s?.description ? `${field} ${s.description}` : `${field} has an invalid format`;
    case 'format':
      return `${field} must be a valid ${e.params.format}`;
    case 'minItems':
      return `${field} must have at least ${e.params.limit} item(s)`;
    case 'maxItems':
      return `${field} must have at most ${e.params.limit} items`;
    case 'additionalProperties':
      return `${field} must not have the field ${e.params.additionalProperty}`;
    default:
      return `${field} ${e.message ?? 'is invalid'}`;
  }
}

/**
 * A checker for JSON that does not arrive as an HTTP body (WebSocket messages), with the same Ajv
 * settings and the same sentences as the routes: defaults are filled in, and a bad value throws
 * InvalidRequestError naming the field and the rule.
 */
export function messageValidator<T>(schema: TSchema): (data: unknown) => T {
  const check = new Ajv(ajvOptions).compile(schema);
  return (data) => {
    if (!check(data)) throw new InvalidRequestError(validationMessage({ validation: check.errors ?? [], validationContext: 'body' }));
    return data as T;
  };
}
