export {
  TRACING_ENV_NAMES,
  parseTracingEnv,
  type OtlpProtocol,
  type TracingEnvResult,
  type TracingSettings,
} from './tracing-env.js';
export { startTracing, type RunningTracing, type StartTracingOptions } from './start-tracing.js';
export {
  carrierFrom,
  carrierOf,
  contextFromCarrier,
  injectIntoMeta,
  linkTo,
  type TraceCarrier,
} from './trace-carrier.js';
