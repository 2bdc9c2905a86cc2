import { VERDICTS } from '@observatory/core';
import { z } from 'zod';

/**
 * Building blocks of the tools' output schemas. Objects are loose (extra members allowed) so
 * the service layer can add fields without breaking clients that validate structuredContent.
 */
export const maybeNumber = z.number().nullable();
export const maybeString = z.string().nullable();
/** An ISO 8601 timestamp, or null when it never happened. */
export const maybeTimestamp = z.string().nullable();
export const verdictField = z.enum(VERDICTS).describe('PASS (score ≥ 70), UNCERTAIN, or FAIL (score < 30)');
export const trustScoreField = z
  .number()
  .nullable()
  .describe('0-100; above 70 reliable, below 30 risky; null when there is no runtime evidence');
