// The options the policy commands share, parsed as commander reads them, and how the commands print.
import { InvalidArgumentError, Option } from 'commander';
import { ENVIRONMENTS, type Environment } from '../lib/principal.ts';

export const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

export function time(raw: string): string {
  if (Number.isNaN(Date.parse(raw))) throw new InvalidArgumentError('must be an RFC 3339 time');
  return raw;
}
export function number(min: number, max: number) {
  return (raw: string): number => {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be a number from ${min} to ${max}`);
    return n;
  };
}

/** Every policy command acts on one environment's versions (test mode); live unless told. */
export const environmentOption = () =>
  new Option('--environment <environment>', 'whose policies: live, or test (test mode)')
    .choices(ENVIRONMENTS)
    .default('live');
export type Env = { environment: Environment };
export type Progress = { progress?: boolean };
