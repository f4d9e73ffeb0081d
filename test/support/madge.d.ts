/** The part of madge's API the tests use (the package ships no types). */
declare module 'madge' {
  interface MadgeResult {
    /** Every file reached from the entry, relative to `baseDir`, with what it imports. */
    obj(): Record<string, string[]>;
  }
  interface MadgeConfig {
    baseDir?: string;
    fileExtensions?: string[];
    detectiveOptions?: Record<string, Record<string, unknown>>;
  }
  export default function madge(path: string, config?: MadgeConfig): Promise<MadgeResult>;
}
