// The shape a server value has once it crossed to the browser as JSON: dates become ISO strings.
// Client components type their props with Wire<ReadModelType> instead of restating the fields.
export type Wire<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;
