import { describe, expect, it } from 'vitest';
import { describeConnectionFailure, maskPassword } from './connection-failure.js';

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
  code: 'ECONNREFUSED',
});

describe('connection failures an operator can fix', () => {
  it('masks a password and leaves a URL without one alone', () => {
    expect(maskPassword('postgres://app:s3cret@db:5432/x')).toBe('postgres://app:***@db:5432/x');
    expect(maskPassword('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(maskPassword('not a url')).toBe('(unparsable URL)');
  });

  it('names the variable, the address and the fix for a refused connection', () => {
    expect(describeConnectionFailure('DATABASE_URL', 'postgres://u:pw@127.0.0.1/db', refused)).toBe(
      'DATABASE_URL=postgres://u:***@127.0.0.1/db: connection refused to 127.0.0.1:5432. ' +
        'Start Postgres there, or set DATABASE_URL to the address of a running Postgres.',
    );
  });

  it('finds the code inside the AggregateError of a connect that tried several addresses', () => {
    const both = new AggregateError([new Error('no code'), refused]);
    expect(describeConnectionFailure('REDIS_URL', 'redis://localhost', both)).toBe(
      'REDIS_URL=redis://localhost: connection refused to localhost:6379. ' +
        'Start Redis there, or set REDIS_URL to the address of a running Redis.',
    );
  });

  it('leaves any other error to the caller', () => {
    expect(
      describeConnectionFailure('REDIS_URL', 'redis://x', new Error('NOAUTH')),
    ).toBeUndefined();
  });
});
