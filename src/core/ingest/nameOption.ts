/**
 * How a message names an option of the caller's: the CLI passes one that gives the flag
 * (`imageColumn` -> `--image-column`), so its users read the flag they type; a library caller
 * reads the option's own name. The core never names a flag or an environment variable itself.
 */
export type NameOption = (option: string) => string;

/** The default {@link NameOption}: the option's name as the library takes it. */
export const ownOptionName: NameOption = (option) => option;
