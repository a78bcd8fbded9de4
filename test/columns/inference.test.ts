import { describe, expect, it } from 'vitest';
import { foldFieldName, nameNewFields, joinTypes, valueType, type ColumnType, FieldTracker } from '../../src/columns/typed-columns.ts';

/** The column type a field takes over these values, as the pipeline infers it. */
function infer(...values: unknown[]): ColumnType {
  const tracker = new FieldTracker();
  for (const v of values) tracker.observe({ f: v });
  return tracker.fieldValues().get('f')!.type;
}

describe('column type inference', () => {
  it('booleans, integers, numbers, strings, objects and arrays', () => {
    expect(infer(true, false)).toBe('boolean');
    expect(infer(1, -7, 0)).toBe('bigint');
    expect(infer(1.5)).toBe('numeric');
    expect(infer(1, 2.25)).toBe('numeric');
    expect(infer(1e21)).toBe('numeric');
    expect(infer('LTL', 'FTL')).toBe('text');
    expect(infer({ a: 1 })).toBe('jsonb');
    expect(infer(['pickup'])).toBe('jsonb');
    expect(infer([], 'x')).toBe('jsonb');
  });

  it('integers by their JSON text: a 20-digit integer is numeric, bigint bounds exactly', () => {
    const raw = (text: string) => (JSON as unknown as { rawJSON: (t: string) => unknown }).rawJSON(text);
    expect(infer(raw('9223372036854775807'))).toBe('bigint');
    expect(infer(raw('-9223372036854775808'))).toBe('bigint');
    expect(infer(raw('9223372036854775808'))).toBe('numeric');
    expect(infer(raw('12345678901234567890'))).toBe('numeric');
    expect(infer(raw('5.0'))).toBe('numeric');
    expect(valueType(raw('"2024-06-11"'))).toBe('date');
  });

  it('ISO-8601 dates and date-times with an offset; anything else stays text', () => {
    expect(infer('2024-06-11', '2000-02-29')).toBe('date');
    expect(infer('2024-06-11T10:00:00Z', '2024-06-11 10:00:00.123456+02:00', '2024-06-11T10:00+0530')).toBe('timestamptz');
    expect(infer('2023-02-29')).toBe('text');
    expect(infer('2024-13-01')).toBe('text');
    expect(infer('0000-01-01')).toBe('text');
    expect(infer('2024-06-11T24:00:00Z')).toBe('text');
    expect(infer('2024-06-11T10:00:00')).toBe('text');
    expect(infer('2024-06-11', '2024-06-11T10:00:00Z')).toBe('text');
    expect(infer('2024-06-11', 'soon')).toBe('text');
  });

  it('nulls do not decide; a field only ever null is null (read as text)', () => {
    expect(infer(null, true, null)).toBe('boolean');
    expect(infer(null, 3)).toBe('bigint');
    expect(infer(null, null)).toBe('null');
  });

  it('types only widen along the lattice: bigint < numeric < text < jsonb, boolean < jsonb', () => {
    expect(infer(1, 'one')).toBe('text');
    expect(infer(1.5, '2024-06-11')).toBe('text');
    expect(infer(true, 1)).toBe('jsonb');
    expect(infer(true, 'yes')).toBe('jsonb');
    expect(infer('a', { b: 1 })).toBe('jsonb');
    const all: ColumnType[] = ['null', 'boolean', 'bigint', 'numeric', 'date', 'timestamptz', 'text', 'jsonb'];
    for (const a of all) {
      expect(joinTypes(a, 'null')).toBe(a);
      expect(joinTypes(a, 'jsonb')).toBe('jsonb');
      for (const b of all) {
        const j = joinTypes(a, b);
        expect(joinTypes(b, a), `${a} ⊔ ${b}`).toBe(j);
        // The join is an upper bound of both: joining either again changes nothing.
        expect(joinTypes(j, a)).toBe(j);
        expect(joinTypes(j, b)).toBe(j);
      }
    }
    expect(joinTypes('date', 'timestamptz')).toBe('text');
    expect(joinTypes('bigint', 'numeric')).toBe('numeric');
  });

  it('the signature for drift alerts is unchanged by the column types', () => {
    const tracker = new FieldTracker();
    tracker.observe({ id: 1, flag: true, none: null });
    tracker.observe({ id: 'x' });
    expect(tracker.signature()).toEqual(['flag:boolean', 'id:number|string', 'none:null']);
  });
});

describe('column names', () => {
  it('a plain lower-case identifier is its own name; other fields fold', () => {
    expect(foldFieldName('is_charge_code')).toBe('is_charge_code');
    expect(foldFieldName('isChargeCode')).toBe('is_charge_code');
    expect(foldFieldName('HTTPStatus')).toBe('http_status');
    expect(foldFieldName('Long Description')).toBe('long_description');
    expect(foldFieldName('unit-of-measure')).toBe('unit_of_measure');
    expect(foldFieldName('2nd_code')).toBe('f_2nd_code');
    expect(foldFieldName('größe')).toBe('gr_e');
    expect(foldFieldName('---')).toBe('field');
    expect(foldFieldName('x'.repeat(80))).toBe('x'.repeat(50));
  });

  it('collisions: a contract column gets _field, a taken name _2, _3; no field is dropped', () => {
    const contract = ['environment', 'variant', 'entry_key', 'code', 'description', 'payload', 'valid_from', 'valid_to'];
    const names = nameNewFields(['code', 'Is Active', 'is_active', 'isActive', 'payload', 'id'], contract, ['id']);
    expect(Object.fromEntries(names)).toEqual({
      code: 'code_field',
      payload: 'payload_field',
      // The plain identifier claims its name first, whatever order the fields came in.
      is_active: 'is_active',
      'Is Active': 'is_active_2',
      isActive: 'is_active_3',
      id: 'id_2',
    });
    // The same fields in another order get the same names.
    const again = nameNewFields(['isActive', 'id', 'payload', 'is_active', 'Is Active', 'code'], contract, ['id']);
    expect(again).toEqual(names);
  });
});
