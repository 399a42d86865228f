// What a console view looks like once it crossed the wire as JSON: every Date became its ISO text.
// The read models keep Dates; the browser's views read these shapes.
export type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;
