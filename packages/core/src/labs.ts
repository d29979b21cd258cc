/**
 * The laboratory catalogue shared by the server (its `lab-tests` terminology part) and the app's
 * lab screens: orderable LOINC tests and panels with their specimen, the analytes each one
 * reports with UCUM units and adult reference ranges, and the interpretation of a value against
 * a range (H/L, and HH/LL beyond the critical limits).
 *
 * LOINC codes and long common names: LOINC is copyright © Regenstrief Institute, Inc. and the
 * LOINC Committee, available at no cost under the license at https://loinc.org/license/ (which
 * allows redistributing codes and names with this notice).
 *
 * The reference ranges are common adult ranges in conventional units, a starting point: the
 * result form fills them in and the person entering the result corrects them to the performing
 * laboratory's own (each Observation stores the range it was judged against).
 */

/** The LOINC system URL. */
export const LOINC = 'http://loinc.org';
/** The UCUM system URL. */
export const UCUM = 'http://unitsofmeasure.org';
/** The orderable lab tests and panels (ValueSet/$expand with `filter` for type-ahead). */
export const LAB_TESTS_VALUE_SET = 'https://hearth.dev/fhir/ValueSet/lab-tests';
/** Every analyte the orderables report. */
export const LAB_ANALYTES_VALUE_SET = 'https://hearth.dev/fhir/ValueSet/lab-analytes';
/** Hearth's code system of lab workflow tasks (Task.code), loaded with the `lab-tests` terminology part. */
export const LAB_TASK_SYSTEM = 'https://hearth.dev/fhir/CodeSystem/lab-task';
/** Task.code of the review a result awaits from its ordering practitioner (the results inbox). */
export const REVIEW_RESULT = { system: LAB_TASK_SYSTEM, code: 'review-result', display: 'Review result' };
/** Identifier.system of the requisition numbers Hearth gives lab orders (printed on the requisition). */
export const LAB_REQUISITION_SYSTEM = 'https://hearth.dev/fhir/sid/lab-requisition';
/** HL7 v3 ObservationInterpretation (R4's binding for Observation.interpretation). */
export const OBSERVATION_INTERPRETATION = 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation';

/** One analyte: what a result row measures. */
export interface LabAnalyte {
  /** LOINC code. */
  code: string;
  /** LOINC long common name. */
  display: string;
  /** A short label for tables. */
  label: string;
  /** UCUM unit code of a quantitative result; absent for an ordinal (text) result. */
  unit?: string;
  /** Reference range limits, when the analyte has them. */
  low?: number;
  high?: number;
  /** Critical (panic) limits: beyond them the result is HH / LL. */
  criticalLow?: number;
  criticalHigh?: number;
  /** Ordinal results: the expected value (anything else is abnormal) and the usual choices. */
  normalText?: string;
  choices?: string[];
  /** Other names clients send for this code (older LOINC names, component names). */
  synonyms?: string[];
}

/** One orderable test or panel. */
export interface LabTest {
  code: string;
  display: string;
  /** The specimen to collect: type and container. */
  specimen: string;
  /** Instructions for the patient (e.g. fasting). */
  patientInstruction?: string;
  /** LOINC codes of the analytes it reports (itself, for a single test). */
  analytes: string[];
  synonyms?: string[];
}

const DIPSTICK = ['Negative', 'Trace', '1+', '2+', '3+'];

/** Analytes, by LOINC code. */
export const LAB_ANALYTES: Record<string, LabAnalyte> = Object.fromEntries(
  (
    [
      // Complete blood count.
      [
        '6690-2',
        'Leukocytes [#/volume] in Blood by Automated count',
        'WBC',
        '10*3/uL',
        4,
        11,
        2,
        30,
        ['WBC Auto (Bld) [#/Vol]', 'Leukocytes'],
      ],
      [
        '789-8',
        'Erythrocytes [#/volume] in Blood by Automated count',
        'RBC',
        '10*6/uL',
        4.2,
        5.9,
        undefined,
        undefined,
        ['RBC Auto (Bld) [#/Vol]', 'Erythrocytes'],
      ],
      ['718-7', 'Hemoglobin [Mass/volume] in Blood', 'Hemoglobin', 'g/dL', 12, 17.5, 7, 20, ['Hemoglobin']],
      [
        '4544-3',
        'Hematocrit [Volume Fraction] of Blood by Automated count',
        'Hematocrit',
        '%',
        36,
        52,
        21,
        60,
        ['Hematocrit'],
      ],
      ['787-2', 'Erythrocyte mean corpuscular volume [Entitic volume] by Automated count', 'MCV', 'fL', 80, 100],
      ['785-6', 'Erythrocyte mean corpuscular hemoglobin [Entitic mass] by Automated count', 'MCH', 'pg', 27, 33],
      ['786-4', 'MCHC [Mass/volume] by Automated count', 'MCHC', 'g/dL', 32, 36],
      ['788-0', 'Erythrocyte distribution width [Ratio] by Automated count', 'RDW', '%', 11.5, 14.5],
      [
        '777-3',
        'Platelets [#/volume] in Blood by Automated count',
        'Platelets',
        '10*3/uL',
        150,
        400,
        50,
        1000,
        ['Platelets'],
      ],
      // Basic and comprehensive metabolic panels.
      ['2345-7', 'Glucose [Mass/volume] in Serum or Plasma', 'Glucose', 'mg/dL', 70, 99, 50, 400, ['Glucose']],
      [
        '3094-0',
        'Urea nitrogen [Mass/volume] in Serum or Plasma',
        'Urea nitrogen (BUN)',
        'mg/dL',
        7,
        20,
        undefined,
        100,
        ['Urea nitrogen'],
      ],
      [
        '2160-0',
        'Creatinine [Mass/volume] in Serum or Plasma',
        'Creatinine',
        'mg/dL',
        0.6,
        1.3,
        undefined,
        7,
        ['Creatinine'],
      ],
      ['2951-2', 'Sodium [Moles/volume] in Serum or Plasma', 'Sodium', 'mmol/L', 135, 145, 120, 160, ['Sodium']],
      [
        '2823-3',
        'Potassium [Moles/volume] in Serum or Plasma',
        'Potassium',
        'mmol/L',
        3.5,
        5.1,
        2.8,
        6.2,
        ['Potassium'],
      ],
      ['2075-0', 'Chloride [Moles/volume] in Serum or Plasma', 'Chloride', 'mmol/L', 98, 107, 80, 120, ['Chloride']],
      [
        '2028-9',
        'Carbon dioxide, total [Moles/volume] in Serum or Plasma',
        'CO2, total',
        'mmol/L',
        22,
        29,
        10,
        40,
        ['Carbon dioxide'],
      ],
      ['17861-6', 'Calcium [Mass/volume] in Serum or Plasma', 'Calcium', 'mg/dL', 8.6, 10.3, 6.5, 13, ['Calcium']],
      ['2885-2', 'Protein [Mass/volume] in Serum or Plasma', 'Protein, total', 'g/dL', 6, 8.3],
      [
        '1751-7',
        'Albumin [Mass/volume] in Serum or Plasma',
        'Albumin',
        'g/dL',
        3.5,
        5,
        undefined,
        undefined,
        ['Albumin'],
      ],
      ['1975-2', 'Bilirubin.total [Mass/volume] in Serum or Plasma', 'Bilirubin, total', 'mg/dL', 0.1, 1.2],
      ['1968-7', 'Bilirubin.direct [Mass/volume] in Serum or Plasma', 'Bilirubin, direct', 'mg/dL', 0, 0.3],
      [
        '6768-6',
        'Alkaline phosphatase [Enzymatic activity/volume] in Serum or Plasma',
        'Alkaline phosphatase',
        'U/L',
        44,
        147,
      ],
      ['1742-6', 'Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma', 'ALT', 'U/L', 7, 56],
      ['1920-8', 'Aspartate aminotransferase [Enzymatic activity/volume] in Serum or Plasma', 'AST', 'U/L', 10, 40],
      // Lipids.
      [
        '2093-3',
        'Cholesterol [Mass/volume] in Serum or Plasma',
        'Cholesterol, total',
        'mg/dL',
        undefined,
        199,
        undefined,
        undefined,
        ['Total Cholesterol', 'Cholesterol'],
      ],
      [
        '2571-8',
        'Triglyceride [Mass/volume] in Serum or Plasma',
        'Triglycerides',
        'mg/dL',
        undefined,
        149,
        undefined,
        1000,
        ['Triglycerides', 'Triglyceride'],
      ],
      [
        '2085-9',
        'Cholesterol in HDL [Mass/volume] in Serum or Plasma',
        'HDL cholesterol',
        'mg/dL',
        40,
        undefined,
        undefined,
        undefined,
        ['High Density Lipoprotein Cholesterol', 'HDL Cholesterol'],
      ],
      [
        '13457-7',
        'Cholesterol in LDL [Mass/volume] in Serum or Plasma by calculation',
        'LDL cholesterol (calculated)',
        'mg/dL',
        undefined,
        99,
      ],
      [
        '18262-6',
        'Cholesterol in LDL [Mass/volume] in Serum or Plasma by Direct assay',
        'LDL cholesterol (direct)',
        'mg/dL',
        undefined,
        99,
        undefined,
        undefined,
        ['Low Density Lipoprotein Cholesterol'],
      ],
      // Single tests.
      [
        '4548-4',
        'Hemoglobin A1c/Hemoglobin.total in Blood',
        'Hemoglobin A1c',
        '%',
        4,
        5.6,
        undefined,
        undefined,
        ['Hemoglobin A1c'],
      ],
      [
        '3016-3',
        'Thyrotropin [Units/volume] in Serum or Plasma',
        'TSH',
        'm[IU]/L',
        0.4,
        4,
        undefined,
        undefined,
        ['TSH', 'Thyrotropin'],
      ],
      ['3024-7', 'Thyroxine (T4) free [Mass/volume] in Serum or Plasma', 'Free T4', 'ng/dL', 0.8, 1.8],
      ['1988-5', 'C reactive protein [Mass/volume] in Serum or Plasma', 'C-reactive protein', 'mg/L', undefined, 10],
      ['2276-4', 'Ferritin [Mass/volume] in Serum or Plasma', 'Ferritin', 'ng/mL', 20, 250],
      ['2132-9', 'Cobalamin (Vitamin B12) [Mass/volume] in Serum or Plasma', 'Vitamin B12', 'pg/mL', 200, 900],
      ['2857-1', 'Prostate specific Ag [Mass/volume] in Serum or Plasma', 'PSA', 'ng/mL', undefined, 4],
      ['10839-9', 'Troponin I.cardiac [Mass/volume] in Serum or Plasma', 'Troponin I', 'ng/mL', undefined, 0.04],
      ['5902-2', 'Prothrombin time (PT)', 'Prothrombin time', 's', 11, 13.5],
      ['34714-6', 'INR in Blood by Coagulation assay', 'INR', '{INR}', 0.8, 1.2, undefined, 5],
      // Urinalysis (dipstick).
      ['5811-5', 'Specific gravity of Urine by Test strip', 'Specific gravity', '1', 1.005, 1.03],
      ['5803-2', 'pH of Urine by Test strip', 'pH', '[pH]', 5, 8],
    ] as const
  ).map(([code, display, label, unit, low, high, criticalLow, criticalHigh, synonyms]) => [
    code,
    {
      code,
      display,
      label,
      unit,
      low,
      high,
      criticalLow,
      criticalHigh,
      synonyms: synonyms ? [...synonyms] : undefined,
    },
  ]),
);

for (const [code, display, label] of [
  ['5804-0', 'Protein [Mass/volume] in Urine by Test strip', 'Protein (urine)'],
  ['5792-7', 'Glucose [Mass/volume] in Urine by Test strip', 'Glucose (urine)'],
  ['5797-6', 'Ketones [Mass/volume] in Urine by Test strip', 'Ketones (urine)'],
  ['5794-3', 'Hemoglobin [Presence] in Urine by Test strip', 'Blood (urine)'],
  ['5799-2', 'Leukocyte esterase [Presence] in Urine by Test strip', 'Leukocyte esterase'],
  ['5802-4', 'Nitrite [Presence] in Urine by Test strip', 'Nitrite'],
] as const) {
  LAB_ANALYTES[code] = {
    code,
    display,
    label,
    normalText: 'Negative',
    choices: code === '5802-4' ? ['Negative', 'Positive'] : DIPSTICK,
  };
}

const BMP = ['2345-7', '3094-0', '2160-0', '2951-2', '2823-3', '2075-0', '2028-9', '17861-6'];
const LIVER = ['2885-2', '1751-7', '1975-2', '6768-6', '1742-6', '1920-8'];
const SERUM = 'Serum, gold or red top (SST)';
const FASTING = 'Fast for 9–12 hours before the sample (water allowed)';

function single(code: string, specimen: string, patientInstruction?: string): LabTest {
  const analyte = LAB_ANALYTES[code];
  return {
    code,
    display: analyte.display,
    specimen,
    patientInstruction,
    analytes: [code],
    synonyms: analyte.synonyms,
  };
}

/** Orderable tests and panels, in the order a clinician looks for them. */
export const LAB_TESTS: LabTest[] = [
  {
    code: '58410-2',
    display: 'CBC panel - Blood by Automated count',
    specimen: 'Whole blood, EDTA (lavender top)',
    analytes: ['6690-2', '789-8', '718-7', '4544-3', '787-2', '785-6', '786-4', '788-0', '777-3'],
    synonyms: ['Complete blood count (hemogram) panel - Blood by Automated count', 'Complete blood count'],
  },
  {
    code: '24321-2',
    display: 'Basic metabolic 2000 panel - Serum or Plasma',
    specimen: SERUM,
    analytes: BMP,
    synonyms: ['Basic Metabolic 2000 Panel', 'Basic metabolic panel'],
  },
  {
    code: '24323-8',
    display: 'Comprehensive metabolic 2000 panel - Serum or Plasma',
    specimen: SERUM,
    analytes: [...BMP, ...LIVER],
    synonyms: ['Comprehensive metabolic panel'],
  },
  {
    code: '24325-3',
    display: 'Hepatic function 2000 panel - Serum or Plasma',
    specimen: SERUM,
    analytes: ['2885-2', '1751-7', '1975-2', '1968-7', '6768-6', '1742-6', '1920-8'],
    synonyms: ['Liver function panel'],
  },
  {
    code: '24331-1',
    display: 'Lipid 1996 panel - Serum or Plasma',
    specimen: SERUM,
    patientInstruction: FASTING,
    analytes: ['2093-3', '2571-8', '2085-9', '13457-7'],
    synonyms: ['Lipid panel'],
  },
  {
    code: '57698-3',
    display: 'Lipid panel with direct LDL - Serum or Plasma',
    specimen: SERUM,
    patientInstruction: FASTING,
    analytes: ['2093-3', '2571-8', '2085-9', '18262-6'],
    synonyms: ['Lipid Panel'],
  },
  single('4548-4', 'Whole blood, EDTA (lavender top)'),
  single('3016-3', SERUM),
  single('3024-7', SERUM),
  {
    code: '24357-6',
    display: 'Urinalysis macro (dipstick) panel - Urine',
    specimen: 'Urine, clean-catch midstream, sterile container',
    analytes: ['5811-5', '5803-2', '5804-0', '5792-7', '5797-6', '5794-3', '5799-2', '5802-4'],
    synonyms: ['Urinalysis'],
  },
  single('2345-7', 'Plasma, sodium fluoride (grey top), or serum', FASTING),
  single('2160-0', SERUM),
  single('2823-3', 'Plasma, lithium heparin (green top), or serum'),
  single('1988-5', SERUM),
  single('2276-4', SERUM),
  single('2132-9', SERUM),
  single('2857-1', SERUM),
  single('10839-9', 'Plasma, lithium heparin (green top)'),
  single('5902-2', 'Citrated plasma, sodium citrate (light blue top), filled to the line'),
  single('34714-6', 'Citrated plasma, sodium citrate (light blue top), filled to the line'),
];

/** An orderable test by LOINC code. */
export function labTest(code: string | undefined): LabTest | undefined {
  return LAB_TESTS.find((t) => t.code === code);
}

/** The analytes an ordered test reports: the panel's members, the test itself, or none when it is unknown. */
export function labAnalytesOf(code: string | undefined): LabAnalyte[] {
  const test = labTest(code);
  if (test) return test.analytes.map((c) => LAB_ANALYTES[c]);
  return code && LAB_ANALYTES[code] ? [LAB_ANALYTES[code]] : [];
}

/** A result's interpretation code (HL7 v3 ObservationInterpretation). */
export type LabFlag = 'HH' | 'H' | 'N' | 'L' | 'LL' | 'A';

/** The displays of the interpretation codes, as the code system has them. */
export const LAB_FLAG_DISPLAY: Record<LabFlag, string> = {
  HH: 'Critical high',
  H: 'High',
  N: 'Normal',
  L: 'Low',
  LL: 'Critical low',
  A: 'Abnormal',
};

/** Limits to judge a value against. */
export interface LabLimits {
  low?: number;
  high?: number;
  criticalLow?: number;
  criticalHigh?: number;
}

/**
 * A numeric value's interpretation: LL / HH beyond a critical limit, L / H outside the reference
 * range, N inside it; undefined when there is no limit to judge by.
 */
export function interpretValue(value: number, limits: LabLimits): LabFlag | undefined {
  const { low, high, criticalLow, criticalHigh } = limits;
  if (criticalLow !== undefined && value < criticalLow) return 'LL';
  if (criticalHigh !== undefined && value > criticalHigh) return 'HH';
  if (low !== undefined && value < low) return 'L';
  if (high !== undefined && value > high) return 'H';
  if (low === undefined && high === undefined) return undefined;
  return 'N';
}

/** An ordinal (text) value's interpretation: N when it is the expected value, A otherwise. */
export function interpretText(value: string, normalText: string | undefined): LabFlag | undefined {
  if (!normalText || !value.trim()) return undefined;
  return value.trim().toLowerCase() === normalText.toLowerCase() ? 'N' : 'A';
}
