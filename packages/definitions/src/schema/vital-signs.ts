/**
 * The vital signs profiles (hl7.org/fhir/R4/observation-vitalsigns.html) and the codes that make
 * them mandatory. R4 requires an Observation with one of the LOINC codes of its vital signs table
 * to conform to the matching profile; those codes are the ones each profile fixes in its
 * `Observation.code.coding` slice (8310-5 in bodytemp's BodyTempCode, ...), read from the profiles
 * here rather than written out again.
 *
 * The reference validator (org.hl7.fhir.validation, instance/type/ObservationValidator.java) also
 * applies the profiles to Observations that name the measurement in SNOMED CT; those codes are
 * listed below as it lists them, in its order (the first rule that matches applies, LOINC rules
 * first). Such an Observation lacks the LOINC code the profile requires (an Observation with it is
 * matched by the LOINC rule first), so which of the profiles applies changes the message, not the
 * verdict. Two differences from it, on purpose:
 * - its SNOMED CT rule for respiratory rate names no profile, so it applies none; those concepts
 *   are left out (271306003 too, which it lists for respiratory rate before heart rate);
 * - it also applies the profiles to more specific LOINC codes (8331-1 oral temperature, 2713-6
 *   oxygen saturation, ...). R4 asks those to be sent beside the table's code, not instead of it,
 *   but does not list them; Hearth does not apply the profiles to them (yet): real data sends them
 *   alone (the shared Synthea sample has vital-sign Observations coded 2713-6 only) and refusing
 *   those writes would refuse whole patient imports.
 */
import type { StructureDefinitionJson } from './convert.js';
import { trimProfile, type TrimOptions } from './profiles.js';
import type { ProfileByCode, ProfileElementSchema, ProfileSchema } from './types.js';

const BASE = 'http://hl7.org/fhir/StructureDefinition/';
export const VITAL_SIGNS_PROFILE = `${BASE}vitalsigns`;
const LOINC = 'http://loinc.org';
const SNOMED_CT = 'http://snomed.info/sct';

/**
 * The profiles in the reference validator's order, with the SNOMED CT concepts it applies each
 * to (a concept listed twice there belongs to its first profile).
 */
export const VITAL_SIGNS_SNOMED_CT: readonly { profile: string; snomed: readonly string[] }[] = [
  { profile: 'vitalspanel', snomed: ['46680005'] },
  { profile: 'resprate', snomed: [] },
  { profile: 'heartrate', snomed: ['249043002', '444981005', '399017001', '251670001', '429525003', '429614003'] },
  {
    profile: 'oxygensat',
    snomed: ['103228002', '442349007', '442476006', '442440005', '431314004', '442734002', '713194001'],
  },
  {
    profile: 'bodytemp',
    snomed: [
      '386725007',
      '276885007',
      '300076005',
      '1222808002',
      '364246006',
      '307047009',
      '708499008',
      '431598003',
      '698831002',
      '698832009',
      '415882003',
      '415974002',
      '415929009',
      '415945006',
    ],
  },
  {
    profile: 'bodyheight',
    snomed: ['1153637007', '1162419008', '50373000', '1162418000', '1230278008', '1162392001', '1162417005'],
  },
  { profile: 'headcircum', snomed: ['363812007', '169876006', '1269262007', '363811000'] },
  {
    profile: 'bodyweight',
    snomed: ['60621009', '735395000', '425024002', '424927000', '784399000', '1162416001', '1162415002'],
  },
  { profile: 'bmi', snomed: [] },
  {
    profile: 'bp',
    snomed: [
      '75367002',
      '251076008',
      '163033001',
      '163035008',
      '386534000',
      '386536003',
      '271649006',
      '271650006',
      '407556006',
      '407554009',
      '716579001',
      '399304008',
    ],
  },
];

/**
 * R4 binds every component value of a vital sign (a Quantity, a CodeableConcept, a string...) to
 * the UCUM units of ucum-vitals-common as required. The reference validator does not hold
 * component values to it (its cases obs-fio2, an inhaled oxygen flow in L/min, and
 * obs-vital-signs-mdc, an MDC code, are valid), and R4B binds a vital sign's Quantity value to that
 * value set as extensible; the binding is read as extensible. The blood pressure slices keep their own
 * required binding (and their fixed mm[Hg]).
 */
const EXTENSIBLE_BINDINGS = new Set(['Observation.component.value[x]']);

/** The 'system|code' a profile fixes in its `Observation.code.coding` slice (bodytemp: LOINC 8310-5). */
function fixedCode(elements: ProfileElementSchema[]): string | undefined {
  const code = elements.find((el) => /^Observation\.code\.coding:[^.]+\.code$/.test(el.id ?? ''));
  if (typeof code?.fixedCode !== 'string') {
    return undefined;
  }
  const system = elements.find((el) => el.id === code.id!.replace(/\.code$/, '.system'));
  return typeof system?.fixedUri === 'string' ? `${system.fixedUri}|${code.fixedCode}` : undefined;
}

/**
 * The vital signs profiles of R4 (profiles-others.json), trimmed, and the rules that make them
 * mandatory.
 */
export function vitalSignsProfiles(
  definitions: StructureDefinitionJson[],
  baseConstraints: Set<string>,
): {
  profiles: ProfileSchema[];
  profilesByCode: ProfileByCode[];
} {
  const byUrl = new Map(definitions.map((sd) => [sd.url, sd]));
  const generic = byUrl.get(VITAL_SIGNS_PROFILE);
  if (!generic) {
    throw new Error(`${VITAL_SIGNS_PROFILE} is missing from the R4 profiles`);
  }
  const listed = new Set(VITAL_SIGNS_SNOMED_CT.map((v) => BASE + v.profile));
  const unlisted = definitions.filter((sd) => sd.baseDefinition === VITAL_SIGNS_PROFILE && !listed.has(sd.url));
  if (unlisted.length > 0) {
    throw new Error(`Vital signs profiles without a rule: ${unlisted.map((sd) => sd.url).join(', ')}`);
  }
  const trim: TrimOptions = { baseConstraints, extensible: EXTENSIBLE_BINDINGS };
  const profiles = [trimProfile(generic, trim)];
  const loinc: ProfileByCode[] = [];
  const snomed: ProfileByCode[] = [];
  for (const { profile, snomed: concepts } of VITAL_SIGNS_SNOMED_CT) {
    const sd = byUrl.get(BASE + profile);
    if (!sd || sd.baseDefinition !== VITAL_SIGNS_PROFILE) {
      throw new Error(`The vital signs profile ${BASE + profile} is missing from the R4 profiles`);
    }
    const trimmed = trimProfile(sd, trim);
    profiles.push(trimmed);
    const code = fixedCode(trimmed.snapshot.element);
    if (!code?.startsWith(`${LOINC}|`)) {
      throw new Error(`${sd.url} fixes no LOINC code in Observation.code.coding`);
    }
    loinc.push({ type: 'Observation', profile: sd.url, codes: [code] });
    if (concepts.length > 0) {
      snomed.push({ type: 'Observation', profile: sd.url, codes: concepts.map((c) => `${SNOMED_CT}|${c}`) });
    }
  }
  return { profiles, profilesByCode: [...loinc, ...snomed] };
}
