// JSON.rawJSON and JSON.isRawJSON (Node 22+, V8 11.4+): not yet in TypeScript's es2024 lib.
interface RawJSON {
  readonly rawJSON: string;
}

interface JSON {
  rawJSON(text: string): RawJSON;
  isRawJSON(value: unknown): value is RawJSON;
}
