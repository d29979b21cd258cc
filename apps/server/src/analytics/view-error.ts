/** A ViewDefinition that is not valid, or that its data cannot be shaped into (the spec's "expectError"). */
export class ViewError extends Error {
  constructor(
    message: string,
    /** Where in the view (e.g. `select[0].column[1].path`) or in the data the problem is. */
    readonly location?: string,
  ) {
    super(message);
    this.name = 'ViewError';
  }
}
