import { InvalidArgumentError } from 'commander';

/** Commander parser for a number > 0 (a rate, seconds, a count). */
export const positiveNumber = (value: string): number => {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0)
    throw new InvalidArgumentError('expected a positive number');
  return parsed;
};
