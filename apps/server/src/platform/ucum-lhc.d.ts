// The part of @lhncbc/ucum-lhc (no type declarations of its own) that platform/ucum.ts uses.
declare module '@lhncbc/ucum-lhc' {
  interface UcumLhcUtils {
    validateUnitString(code: string): { status: 'valid' | 'invalid' | 'error'; msg: string[] };
    convertToBaseUnits(
      code: string,
      value: number,
    ): {
      status: 'succeeded' | 'failed' | 'error';
      magnitude?: number;
      unitToExp?: Record<string, number>;
      msg: string[];
    };
  }
  const ucum: { UcumLhcUtils: { getInstance(): UcumLhcUtils } };
  export default ucum;
}
