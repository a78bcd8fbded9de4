/**
 * When a batch of rows is worth COPY: the database must take a copy stream (capabilities.copy), and
 * the batch must be large enough (tuning.copyMinRows); below that one unnest statement is as quick.
 */
export interface RowWriteRule {
  copy: boolean;
  copyMinRows: number;
}

export function usesCopy(rule: RowWriteRule, rows: number): boolean {
  return rule.copy && rows >= rule.copyMinRows;
}
