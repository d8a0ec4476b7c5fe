import { describe, expect, it } from 'vitest';
import { infrastructureFailure, isTransientInfrastructureError } from './infrastructure-failure.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('infrastructureFailure', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED'), 'unreachable'],
    ['an unknown host', withCode('ENOTFOUND'), 'unreachable'],
    ['a reset connection', withCode('ECONNRESET'), 'connection_lost'],
    ['a dropped pg connection', new Error('Connection terminated unexpectedly'), 'connection_lost'],
    ['an admin shutdown', withCode('57P01', 'terminating connection'), 'shutting_down'],
    ['a crash shutdown', withCode('57P02'), 'shutting_down'],
    ['a server starting or stopping', withCode('57P03'), 'shutting_down'],
    ['any connection exception (class 08)', withCode('08006'), 'connection_lost'],
    ['a refused establishment', withCode('08004'), 'unreachable'],
    ['too many connections', withCode('53300'), 'too_many_connections'],
    ['a full disk (class 53)', withCode('53100'), 'out_of_resources'],
    ['a write on a standby after a failover', withCode('25006'), 'read_only'],
    [
      'a pool that got no connection within its bound',
      new Error('timeout exceeded when trying to connect'),
      'no_free_connection',
    ],
    ['a statement timeout', withCode('57014'), 'timed_out'],
    ['a client-side read timeout', new Error('Query read timeout'), 'timed_out'],
    ['a serialization failure', withCode('40001'), 'conflict'],
    ['a closed Redis connection', new Error('Connection is closed.'), 'connection_lost'],
    [
      'an aggregate of refused sockets',
      new AggregateError([withCode('ECONNREFUSED')]),
      'unreachable',
    ],
  ])('names %s', (_label, error, expected) => {
    expect(infrastructureFailure(error)).toBe(expected);
    expect(isTransientInfrastructureError(error)).toBe(true);
  });

  it.each([
    ['a constraint violation', withCode('23505', 'duplicate key')],
    ['an undefined column (a bug)', withCode('42703')],
    ['a plain bug', new TypeError('x is undefined')],
    ['a non-error', 'boom'],
    ['null', null],
  ])('leaves %s alone (a bug or a bad input, not an outage)', (_label, error) => {
    expect(infrastructureFailure(error)).toBeUndefined();
    expect(isTransientInfrastructureError(error)).toBe(false);
  });
});
