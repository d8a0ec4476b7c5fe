import { z } from 'zod';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './constants.js';
import { ErrorCode, ProtocolError } from './errors.js';
import { describeType, isJsonRecord, isPlainObject } from './json.js';
import { ClientCapabilitiesSchema, type ClientCapabilities } from './capabilities.js';

/** `{name, version}` identifying a client or server; never identity for authorization. */
export const ImplementationSchema = z.looseObject({
  name: z.string(),
  version: z.string(),
  title: z.string().optional(),
});
export type Implementation = z.infer<typeof ImplementationSchema>;

/** What the server learns from one request's `_meta`; valid for that request only (R4). */
export interface RequestMeta {
  protocolVersion: string;
  clientCapabilities: ClientCapabilities;
  /** Absent when not sent or malformed: it is informational and never required (R2). */
  clientInfo?: Implementation;
  /** The `_meta` object as sent, for keys such as `progressToken` or `traceparent`. */
  raw: Record<string, unknown>;
}

const CAPABILITY_RECORDS = ['experimental', 'sampling', 'elicitation', 'extensions'] as const;

/**
 * The capabilities every client sends pass ClientCapabilitiesSchema on sight: the known keys
 * absent or JSON objects, `roots.listChanged` absent or a boolean. Checked by hand because the
 * schema's parse was a large share of a poll's CPU; anything else goes through the schema, which
 * words the error. (The schema's output only copies the object, so the object itself is kept.)
 */
function capabilitiesNeedNoSchema(capabilities: Record<string, unknown>): boolean {
  if (!isJsonRecord(capabilities)) return false;
  for (const key of CAPABILITY_RECORDS) {
    const value = capabilities[key];
    if (value !== undefined && !isJsonRecord(value)) return false;
  }
  const roots = capabilities.roots;
  if (roots === undefined) return true;
  if (!isJsonRecord(roots)) return false;
  return roots.listChanged === undefined || typeof roots.listChanged === 'boolean';
}

/** What ImplementationSchema accepts, checked by hand for the same reason. */
function isPlainImplementation(value: unknown): value is Implementation {
  return (
    isJsonRecord(value) &&
    typeof value.name === 'string' &&
    typeof value.version === 'string' &&
    (value.title === undefined || typeof value.title === 'string')
  );
}

export type MetaValidation = { ok: true; meta: RequestMeta } | { ok: false; error: ProtocolError };

function invalidParams(message: string): { ok: false; error: ProtocolError } {
  return { ok: false, error: new ProtocolError(ErrorCode.InvalidParams, message) };
}

/**
 * Rules R2–R3 for one request's params, in the order the spec fixes: `_meta` present, version a
 * string (-32602), version supported (-32022), then capabilities an object (-32602).
 */
export function validateRequestMeta(
  params: unknown,
  supportedVersions: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS,
): MetaValidation {
  if (!isPlainObject(params)) {
    return invalidParams(
      `Missing params: every MCP ${supportedVersions[0] ?? ''} request must carry params._meta with "${META_PROTOCOL_VERSION}" and "${META_CLIENT_CAPABILITIES}"`,
    );
  }
  const raw = params._meta;
  if (!isPlainObject(raw)) {
    return invalidParams(
      raw === undefined
        ? `Missing params._meta: every request must carry "${META_PROTOCOL_VERSION}" and "${META_CLIENT_CAPABILITIES}" there (there is no initialize handshake)`
        : `params._meta must be an object, received ${describeType(raw)}`,
    );
  }
  const version = raw[META_PROTOCOL_VERSION];
  if (version === undefined) {
    return invalidParams(
      `Missing params._meta["${META_PROTOCOL_VERSION}"]: expected a protocol version string such as "${supportedVersions[0] ?? ''}"`,
    );
  }
  if (typeof version !== 'string') {
    return invalidParams(
      `params._meta["${META_PROTOCOL_VERSION}"] must be a string such as "${supportedVersions[0] ?? ''}", received ${describeType(version)}`,
    );
  }
  if (!supportedVersions.includes(version)) {
    return {
      ok: false,
      error: new ProtocolError(
        ErrorCode.UnsupportedProtocolVersion,
        `Unsupported protocol version "${version}": this server supports ${supportedVersions.map((v) => `"${v}"`).join(', ')}`,
        { supported: [...supportedVersions], requested: version },
      ),
    };
  }
  const capabilities = raw[META_CLIENT_CAPABILITIES];
  if (!isPlainObject(capabilities)) {
    return invalidParams(
      capabilities === undefined
        ? `Missing params._meta["${META_CLIENT_CAPABILITIES}"]: expected an object of the capabilities this request may use ({} declares none)`
        : `params._meta["${META_CLIENT_CAPABILITIES}"] must be an object ({} declares none), received ${describeType(capabilities)}`,
    );
  }
  let clientCapabilities: ClientCapabilities;
  if (capabilitiesNeedNoSchema(capabilities)) clientCapabilities = capabilities;
  else {
    const parsedCapabilities = ClientCapabilitiesSchema.safeParse(capabilities);
    if (!parsedCapabilities.success) {
      const where = parsedCapabilities.error.issues
        .map((i) => `${['clientCapabilities', ...i.path.map(String)].join('.')}: ${i.message}`)
        .join('; ');
      return invalidParams(`Malformed params._meta["${META_CLIENT_CAPABILITIES}"]: ${where}`);
    }
    clientCapabilities = parsedCapabilities.data;
  }
  const meta: RequestMeta = { protocolVersion: version, clientCapabilities, raw };
  const clientInfo = raw[META_CLIENT_INFO];
  if (isPlainImplementation(clientInfo)) meta.clientInfo = clientInfo;
  else if (clientInfo !== undefined) {
    const parsed = ImplementationSchema.safeParse(clientInfo);
    if (parsed.success) meta.clientInfo = parsed.data;
  }
  return { ok: true, meta };
}

export interface RequestMetaInput {
  protocolVersion?: string;
  /** What this one request may use; `{}` declares nothing (R4). */
  clientCapabilities: Record<string, unknown>;
  clientInfo?: Implementation;
}

/** The client side of R2: the reserved `_meta` keys every request must carry. */
export function buildRequestMeta(input: RequestMetaInput): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    [META_PROTOCOL_VERSION]: input.protocolVersion ?? SUPPORTED_PROTOCOL_VERSIONS[0],
    [META_CLIENT_CAPABILITIES]: input.clientCapabilities,
  };
  if (input.clientInfo !== undefined) meta[META_CLIENT_INFO] = input.clientInfo;
  return meta;
}

/** validateRequestMeta that throws its -32602 or -32022 instead of returning it. */
export function parseRequestMeta(
  params: unknown,
  supportedVersions: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS,
): RequestMeta {
  const validation = validateRequestMeta(params, supportedVersions);
  if (!validation.ok) throw validation.error;
  return validation.meta;
}
