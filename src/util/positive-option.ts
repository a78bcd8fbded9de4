/**
 * The checker of a component's numeric options: undefined takes the default; anything but a finite
 * number above zero is refused as `<owner>: <name> must be a positive number`, thrown as the
 * component's own configuration error.
 */
export function positiveOption(owner: string, Refusal: new (message: string) => Error): (name: string, value: number | undefined, fallback: number) => number {
  return (name, value, fallback) => {
    if (value === undefined) return fallback;
    if (!Number.isFinite(value) || value <= 0) throw new Refusal(`${owner}: ${name} must be a positive number`);
    return value;
  };
}
