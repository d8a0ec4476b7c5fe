/**
 * Just enough of the protobuf wire format to read OTLP trace exports: each message is read as a
 * list of (field number, value) pairs, and otlp-trace.ts maps the fields it knows.
 */
export type WireValue =
  | { type: 'varint'; value: bigint }
  | { type: 'fixed64'; value: bigint }
  | { type: 'fixed32'; value: number }
  | { type: 'bytes'; value: Uint8Array };

export interface WireField {
  field: number;
  value: WireValue;
}

export function readMessage(bytes: Uint8Array): WireField[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fields: WireField[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (at >= bytes.length) throw new Error('protobuf: truncated varint');
      const byte = bytes[at++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const field = key >>> 3;
    switch (key & 7) {
      case 0:
        fields.push({ field, value: { type: 'varint', value: varint() } });
        break;
      case 1:
        fields.push({ field, value: { type: 'fixed64', value: view.getBigUint64(at, true) } });
        at += 8;
        break;
      case 2: {
        const length = Number(varint());
        if (at + length > bytes.length) throw new Error('protobuf: truncated field');
        fields.push({ field, value: { type: 'bytes', value: bytes.subarray(at, at + length) } });
        at += length;
        break;
      }
      case 5:
        fields.push({ field, value: { type: 'fixed32', value: view.getUint32(at, true) } });
        at += 4;
        break;
      default:
        throw new Error(`protobuf: unsupported wire type ${key & 7}`);
    }
  }
  return fields;
}

export const bytesOf = (value: WireValue): Uint8Array =>
  value.type === 'bytes' ? value.value : new Uint8Array();
export const textOf = (value: WireValue): string => new TextDecoder().decode(bytesOf(value));
export const hexOf = (value: WireValue): string => Buffer.from(bytesOf(value)).toString('hex');
export const numberOf = (value: WireValue): bigint =>
  value.type === 'varint' || value.type === 'fixed64'
    ? value.value
    : value.type === 'fixed32'
      ? BigInt(value.value)
      : 0n;
